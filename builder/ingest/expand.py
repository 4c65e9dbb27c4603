"""User inputs (paths, directories, globs, Hub ids) → `Source`s, and sources → worker tasks.

Nothing is skipped silently: an unreadable folder, a glob that matches nothing and a directory
without a single trajectory file each become a `Source` carrying the `InputError` that says
why, so that ingest writes a quarantine row for them. Directory walks follow symlinked
folders once each (a loop of links is walked once, not forever) and keep files with a
trajectory suffix, compressed (`.gz`, `.zst`) or not; what else they pass over is logged.
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
from builder.ingest.file_reading import GZIP_SUFFIXES, ZSTD_SUFFIXES
from builder.ingest.formats.source import Source

log = logging.getLogger(__name__)

TRAJECTORY_SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson", ".parquet")
COMPRESSED_SUFFIXES = GZIP_SUFFIXES + ZSTD_SUFFIXES
SIDECAR_NAMES = frozenset(
    {"report.json", "results.json", "config.json", "dataset_info.json"}
    | {"ui_messages.json", "task_metadata.json", "context_history.json"}  # beside a Cline history
)
TASK_BYTES = 32 * 1024 * 1024


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
    """A file name a directory walk picks up: `x.jsonl`, `x.traj.json.gz`, `x.json.zst`..."""
    lower = name.lower()
    if name.startswith(".") or lower in SIDECAR_NAMES:
        return False
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
        for name in sorted(files):
            if is_trajectory_name(name):
                found += 1
                yield Source(Path(root) / name, dict(options))
            else:
                skipped += 1
    yield from _walk_errors(errors, options)
    if skipped:
        log.info("%s: passed over %d file(s) without a trajectory suffix", path, skipped)
    if not found and not errors:
        names = ", ".join(TRAJECTORY_SUFFIXES)
        error = InputError(
            f"{path}: directory holds no trajectory file ({names}, optionally .gz/.zst); "
            f"{skipped} other file(s)",
            kind="no_inputs",
        )
        yield _problem(path, options, error)


def _walk_errors(errors: list[OSError], options: dict[str, Any]) -> Iterator[Source]:
    while errors:
        exc = errors.pop(0)
        where = exc.filename or "?"
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
    if "error" in source.options or "missing" in source.options:
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
