"""Ingest: trajectory files, archives and Hub datasets → canonical trajectories and steps.

Inputs are expanded into sources (`expand`), archives opened and JSON arrays split into what
a task reads (`units`, `archives`), read safely and as streams (`file_reading`,
`text_encoding`, `json_stream`, `zstd_frames`; names rendered by `names`), recognised by a
format adapter (`formats/`), checked (`storable`), deduplicated (`dedup`), scrubbed
(`scrubbing`) and written by worker tasks (`task`) as Parquet shards; `summary` counts what
was kept, passed over and redacted.

Reads: input files and Hub datasets. Writes: `trajectories`, `steps`, `quarantine`.
Entry point: `builder.ingest.parallel.run_ingest`.
"""
