"""Report plots as SVG text from pure functions, with no plotting library."""

from builder.plotting.charts import bar_chart, bin_counts, histogram, no_data, scatter

__all__ = ["bar_chart", "bin_counts", "histogram", "no_data", "scatter"]
