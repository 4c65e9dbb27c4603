"""Ingest: trajectory files, archives and Hub datasets → canonical trajectories and steps.

Inputs are expanded into sources (`expand`), read safely (`file_reading`, `zstd_frames`),
recognised by a format adapter (`formats/`), checked (`storable`), deduplicated (`dedup`),
and written by worker tasks (`task`) as Parquet shards; `summary` counts what was kept.

Reads: input files and Hub datasets. Writes: `trajectories`, `steps`, `quarantine`.
Entry point: `builder.ingest.parallel.run_ingest`.
"""
