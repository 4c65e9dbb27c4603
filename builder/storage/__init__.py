"""Where tables touch the disk: atomic Parquet shards, the user cache folder, and run
folders and inputs on object stores (`s3://`, `gs://`), through a local mirror synced with
whole-object PUTs, tables before markers.

Reads: local and object-store folders. Writes: Parquet shards of every table.
Entry point: `builder.storage.parquet_shards.ShardWriter`.
"""
