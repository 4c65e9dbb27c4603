"""Report plots as SVG text from pure functions, with no plotting library.

Reads: plot data. Writes: nothing (SVG text).
Entry point: `builder.report.svg.charts`.
"""

from builder.report.svg.charts import bar_chart, bin_counts, histogram, no_data, scatter

__all__ = ["bar_chart", "bin_counts", "histogram", "no_data", "scatter"]
