"""Action similarity: parsing shell commands and tool calls, extracting what they do, and
comparing two of them (the per-pair measure the gate aggregates).

Reads: action strings. Writes: nothing (pure).
Entry point: `builder.similarity.compare.get_similarity`.
"""
