"""The run report: figures computed from the run folder's tables, as JSON, markdown and SVG
plots (`svg/`, no plotting library).

Reads: every table of the run folder and `ingest_summary.json`. Writes: `report.json`,
`report.md`, `plots/*.svg`.
Entry point: `builder.report.build.build_report`.
"""
