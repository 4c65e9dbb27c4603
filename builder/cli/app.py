"""The process entry: logging, the command, and the exit codes every command shares.

Exit codes: 0 done; 1 the command found nothing to do (an ingest without a single valid
trajectory, or `--strict` with something quarantined); 2 a usage, config or pre-flight error,
before anything is spent; 3 a run that finished with failed shards or was stopped by its
budget (the same command resumes it); 130 interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import logging
import os
import sys

from builder.cli.parser import build_parser
from builder.errors import NapError

NOISY_LOGGERS = ("httpx", "httpx2", "openai", "anthropic", "urllib3", "filelock", "datasets")


def entry() -> None:
    """The process entry point (console script, `python -m builder.cli`): process-wide
    settings (`builder.startup`), then the command."""
    from builder.startup import exit_now, process_start

    process_start()
    exit_now(main())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except NapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `nap-builder config | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
