"""LLM access: one protocol (`ChatProvider`), one module per provider, and a client that adds
caching, rate limits, retries, budget and usage accounting on top of any provider.

Reads: chat and scoring requests. Writes: the request cache (`OUT/cache`), the budget and
usage ledgers.
Entry point: `builder.llm.factory.build_clients`.
"""
