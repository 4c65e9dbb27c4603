"""Output folders and inputs on object stores (`s3://`, `gs://`): a local mirror of the run
folder, synced to the store with whole-object PUTs, tables before markers."""
