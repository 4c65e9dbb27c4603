"""Exporting a run's canonical trajectories to other representations (`nap-builder export`).

Reads: `trajectories` (with `steps` and `supervision` to link the compressed targets to the
observations they replace). Writes: `DIR/full_std.jsonl`, one ADP standardized trajectory a line.
Entry point: `builder.export.adp_export.export_adp`.
"""
