"""Batch APIs (OpenAI Batch, Anthropic Message Batches): half the price, results within 24 h.

`queue` gathers a round's cache misses and runs submit → poll → collect; `ledger` records every
job and request line under OUT/_state so that nothing is submitted twice across crashes and
resumes; one backend per provider speaks its batch API.

Reads: a round's cache misses. Writes: the batch ledger under `OUT/_state`.
Entry point: `builder.llm.batch.queue.BatchQueue`.
"""
