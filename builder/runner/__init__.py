"""Running a pipeline as a batch job: shards and resume, progress, logging, report, plots."""
