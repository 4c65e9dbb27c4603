"""User inputs (paths, directories, globs, Hub ids) → `Source`s, and sources → worker tasks.

Nothing is skipped silently: an unreadable folder, a glob that matches nothing and a directory
without a single trajectory file each become a `Source` carrying the `InputError` that says
why, so that ingest writes a quarantine row for them. Directory walks follow symlinked
folders once each (a loop of links is walked once, not forever) and keep files with a
trajectory suffix, compressed (`.gz`, `.zst`, `.xz`, `.bz2`) or not, and archives; the other
files of each folder travel as one `passed_over` source that names them (ingest lists them in
its summary, and `--strict` counts them).
"""

from __future__ import annotations

import glob
import logging
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.ingest.archives import is_archive_name
from builder.ingest.file_reading import STREAM_SUFFIXES
from builder.ingest.formats.source import Source
from builder.ingest.names import display_name

log = logging.getLogger(__name__)

TRAJECTORY_SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson", ".parquet")
COMPRESSED_SUFFIXES = STREAM_SUFFIXES
SIDECAR_NAMES = frozenset(
    {"report.json", "results.json", "config.json", "dataset_info.json"}
    | {"ui_messages.json", "task_metadata.json", "context_history.json"}  # beside a Cline history
)
TASK_BYTES = 32 * 1024 * 1024
PASSED_OVER_NAMES = 100  # names kept per folder (all are counted)


@dataclass(frozen=True)
class InputSpec:
    """One user input: a path, directory, glob or Hub id, with an optional forced format."""

    path: str
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def is_dataset_dir(path: Path) -> bool:
    """A folder that is one Hugging Face dataset (saved or Parquet shards), not a tree of logs."""
    if (path / "dataset_info.json").exists() or (path / "state.json").exists():
        return True
    return (path / "data").is_dir() and any((path / "data").glob("*.parquet"))


def is_trajectory_name(name: str) -> bool:
    """A file name a directory walk picks up: `x.jsonl`, `x.traj.json.gz`, `x.json.zst`,
    `x.tar.gz`, `x.zip`..."""
    lower = name.lower()
    if name.startswith(".") or lower in SIDECAR_NAMES:
        return False
    if is_archive_name(lower):
        return True
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    return lower.endswith(TRAJECTORY_SUFFIXES)


def _problem(path: str | Path, options: dict[str, Any], error: InputError) -> Source:
    return Source(Path(path), {**options, "error": error})


def _walk(path: Path, options: dict[str, Any]) -> Iterator[Source]:
    errors: list[OSError] = []
    visited: set[tuple[int, int]] = set()
    found = skipped = 0
    for root, dirs, files in os.walk(path, onerror=errors.append, followlinks=True):
        yield from _walk_errors(errors, options)
        try:
            info = os.stat(root)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in visited:  # reached again through a symlink
            dirs.clear()
            continue
        visited.add((info.st_dev, info.st_ino))
        dirs.sort()
        other: list[str] = []
        for name in sorted(files):
            if is_trajectory_name(name):
                found += 1
                yield Source(Path(root) / name, dict(options))
            elif name.lower() not in SIDECAR_NAMES:
                other.append(display_name(Path(root) / name))
        if other:
            skipped += len(other)
            yield _passed_over(Path(root), other)
    yield from _walk_errors(errors, options)
    if skipped:
        log.info(
            "%s: passed over %d file(s) without a trajectory suffix", display_name(path), skipped
        )
    if not found and not errors:
        names = ", ".join(TRAJECTORY_SUFFIXES)
        error = InputError(
            f"{display_name(path)}: directory holds no trajectory file ({names}, optionally "
            f".gz/.zst/.xz/.bz2, or an archive of them); {skipped} other file(s)",
            kind="no_inputs",
        )
        yield _problem(path, options, error)


def _passed_over(folder: Path, names: list[str]) -> Source:
    """The files of one folder a walk passes over, as one source that names them."""
    kept = names[:PASSED_OVER_NAMES]
    return Source(folder, {"passed_over": kept, "passed_over_count": len(names)})


def _walk_errors(errors: list[OSError], options: dict[str, Any]) -> Iterator[Source]:
    while errors:
        exc = errors.pop(0)
        where = display_name(exc.filename) if exc.filename else "?"
        kind = "permission_denied" if isinstance(exc, PermissionError) else "io"
        message = f"{where}: folder cannot be listed ({exc.strerror or exc})"
        yield _problem(where, options, InputError(message, kind=kind))


def expand(spec: InputSpec) -> Iterator[Source]:
    """Sources for one input, in sorted (deterministic) order."""
    path = Path(spec.path)
    options = dict(spec.options)
    if path.is_dir():
        if is_dataset_dir(path):
            yield Source(path, options)
        else:
            yield from _walk(path, options)
    elif os.path.lexists(path):  # files, and also FIFOs, broken links, loops: checked later
        yield Source(path, options)
    elif any(ch in spec.path for ch in "*?["):
        matches = sorted(glob.glob(spec.path, recursive=True))
        if not matches:
            error = InputError(f"{spec.path}: the pattern matches no file", kind="no_match")
            yield _problem(spec.path, options, error)
        for match in matches:
            yield from expand(InputSpec(match, spec.format, spec.options))
    elif spec.path.count("/") == 1 and not spec.path.startswith((".", "/")):
        yield Source(path, {**options, "hub": spec.path})
    else:
        yield Source(path, {**options, "missing": True})


def source_size(source: Source) -> int:
    """Bytes on disk for a file (compressed size for .gz/.zst), a task's worth for a dataset."""
    if {"error", "missing", "passed_over"} & source.options.keys():
        return 0
    if "hub" in source.options or source.path.is_dir():
        return TASK_BYTES
    try:
        info = source.path.stat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def tasks(specs: Iterable[InputSpec]) -> Iterator[list[tuple[Source, str | None]]]:
    """Groups of sources of about TASK_BYTES each: the unit of work of one worker call."""
    group: list[tuple[Source, str | None]] = []
    size = 0
    for spec in specs:
        for source in expand(spec):
            group.append((source, spec.format))
            size += source_size(source)
            if size >= TASK_BYTES:
                yield group
                group, size = [], 0
    if group:
        yield group
