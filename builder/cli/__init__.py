"""The command line: `nap-builder ingest | inspect | plan | run | status | publish | export |
eval | view | calibrate | pairs | config`.

`parser` declares the commands, their help, defaults and examples; `handlers` runs each one
(importing its stage only when called, so `--help` stays fast); `app` is the process entry
with the exit codes every command shares.

Reads: the command line. Writes: what the command does, and its exit code.
Entry point: `builder.cli.app.entry`.
"""

from builder.cli.app import entry, main
from builder.cli.parser import build_parser

__all__ = ["build_parser", "entry", "main"]
