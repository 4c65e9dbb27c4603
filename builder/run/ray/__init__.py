"""The Ray engine (`execution.engine: ray`): the same stages and shard plans as the local
engine, run on a pool of shard actors started before the ingest (ingest tasks, then shards).

`coordinator` owns the cluster-wide limits and budget, `leases` leases its slots in blocks
where that is exact, `shard_actor` is the actor that holds the LLM clients and runs shards,
`engine` drives a run, `cluster` connects to (or starts) Ray.
Importing this package does not import Ray; its modules do, so Ray stays an optional extra.

Reads: shard plans. Writes: the same tables and markers as the local engine.
Entry point: `builder.run.ray.engine.RayPool`.
"""
