"""`nap-builder eval`: measure a compressor by next-action preservation and tokens saved.

`compressors` parses the SPECs and compresses one step; `step_verdict` judges one compressed
step with the configured gate; `eval_run` orchestrates the steps; `eval_report` computes the
figures from `steps.parquet` and writes report.json, report.md and the plot.

Reads: `steps` (of a run or a published split). Writes: `eval/<compressor>/steps.parquet`,
`eval/report.json`, `eval/report.md`.
Entry point: `builder.evaluate.eval_run.run_eval`.
"""
