"""Running a pipeline as a batch job: ingest, shards and resume, worker processes, progress
and signals; `ray/` runs the same shards on Ray.

Reads: the pipeline config and its inputs. Writes: every table of the run folder, the shard
markers under `_state/`, `run.log`, then the report (through `builder.report`).
Entry point: `builder.run.driver.run_pipeline`.
"""
