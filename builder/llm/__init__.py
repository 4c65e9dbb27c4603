"""LLM access: one protocol (`ChatProvider`), one module per provider, and a client that adds
caching, rate limits, retries, budget and usage accounting on top of any provider."""
