"""`python -m builder.cli`: the same entry as the console script."""

from builder.cli.app import entry

entry()
