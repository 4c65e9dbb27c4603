"""`nap-builder eval`: measure a compressor by next-action preservation and tokens saved.

`compressors` parses the SPECs and compresses one step; `judging` judges one compressed step
with the configured gate; `run` orchestrates the steps; `report` computes the figures from
`steps.parquet` and writes report.json, report.md and the plot.
"""
