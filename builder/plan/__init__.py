"""`nap-builder plan`: what a run will send and cost, before paying for it.

Reads: the ingest tables (`trajectories`, `steps`). Writes: nothing (a printed plan).
Entry point: `builder.plan.estimate.make_plan`.
"""
