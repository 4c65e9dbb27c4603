"""What kind of folder a command was given: a run folder, an ingest folder, or neither.

`status` and `inspect` read tables and ledgers that only a run (or an ingest) writes; given
any other folder they would print "nothing here" and exit 0, which reads like success.
"""

from __future__ import annotations

from pathlib import Path

from builder.errors import InputError

RUN_MARKER = "config.hash"  # written by `nap-builder run` before anything else


def is_run_folder(path: Path) -> bool:
    return (path / RUN_MARKER).is_file()


def has_table(path: Path, table: str) -> bool:
    return any((path / table).glob("*.parquet"))


def require_run_folder(path: Path, command: str) -> None:
    """Refuse a folder that `nap-builder run` did not make, saying what to give instead."""
    if not path.is_dir():
        raise InputError(
            f"{path}: no such folder; `nap-builder {command}` takes a run's output.dir"
        )
    if not is_run_folder(path):
        raise InputError(
            f"{path}: not a run folder (no {RUN_MARKER}); `nap-builder {command}` takes the "
            "output.dir of a `nap-builder run`"
        )


def require_tables(path: Path, command: str, *tables: str) -> None:
    """Refuse a folder without the tables `command` reads (an ingest or a run writes them)."""
    if not path.is_dir():
        raise InputError(f"{path}: no such folder")
    missing = [t for t in tables if not has_table(path, t)]
    if missing:
        raise InputError(
            f"{path}: no {' or '.join(missing)} table here; `nap-builder {command}` takes the "
            "--out of `nap-builder ingest` or the output.dir of `nap-builder run`"
        )
