"""Steps: each observation paired with the action before and after it, and replay.

`pairing` decides which observations are eligible for compression (and why not), `replay`
rebuilds the exact context the agent saw (with a candidate in place of the raw observation),
`tokens` counts cl100k tokens offline, `observation` numbers lines and spots binary text.

Reads: canonical trajectories. Writes: rows of `steps` (through ingest).
Entry point: `builder.steps.pairing.build_steps`.
"""
