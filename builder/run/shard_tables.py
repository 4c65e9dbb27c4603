"""The ingest tables shards are cut from, read once per file instead of once per shard.

Every shard of a trajectories file used to read that file and every steps file of its task
with a row filter (the pyarrow dataset path: milliseconds of setup each, even for small
files), so a file of N shards was read N times. Shards are planned in file order, so this
module keeps the last trajectories file read, an index of which trajectories each steps file
of its task holds (ids only), and the last steps file read (its eligible rows), and slices
each shard out of them by row index. One file of each kind is held at a time: memory stays
bounded by one ingest file, whatever the corpus size.

A file is known by its path, inode, size and modification time, so a re-ingest (which
replaces files atomically) is never served from the cache.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import pyarrow as pa
import pyarrow.parquet as pq

T = TypeVar("T")
Signature = tuple[tuple[str, int, int, int], ...]


def signature(paths: Sequence[Path]) -> Signature:
    """What identifies these files' contents: path, inode, size, mtime (ns)."""
    stats = ((str(p), os.stat(p)) for p in paths)
    return tuple((name, s.st_ino, s.st_size, s.st_mtime_ns) for name, s in stats)


@dataclass
class Indexed:
    """A table with the rows of each trajectory id (in file order)."""

    table: pa.Table
    rows: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, table: pa.Table) -> Indexed:
        rows: dict[str, list[int]] = {}
        for i, tid in enumerate(table.column("trajectory_id").to_pylist()):
            rows.setdefault(tid, []).append(i)
        return cls(table, rows)

    def take(self, ids: Sequence[str], last_only: bool = False) -> list[dict[str, Any]]:
        """The rows of these ids as dicts: ids in the given order, each id's rows in file
        order (only its last row with `last_only`, as a dict keyed by id would keep)."""
        picked: list[int] = []
        for tid in ids:
            found = self.rows.get(tid, [])
            picked.extend(found[-1:] if last_only else found)
        if not picked:
            return []
        return self.table.take(pa.array(picked, pa.int64())).to_pylist()


def read_file(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file, whole (`ParquetFile.read`: no dataset discovery or filter setup)."""
    return pq.ParquetFile(path).read(columns=columns)


def read_eligible(path: Path) -> pa.Table:
    """The eligible rows of one steps file."""
    table = read_file(path)
    import pyarrow.compute as pc  # ~45 ms to import: in the workers only (runner/workers.py)

    return table.filter(pc.equal(table.column("eligible"), True))


class LastOne:
    """The last value loaded, by key: one at a time, so memory holds one file's worth.
    Shared by the worker threads that prepare shards: concurrent shards of one file wait for
    one read instead of each reading it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None
        self._value: object = None

    def get(self, key: object, load: Callable[[], T]) -> T:
        with self._lock:
            if self._key != key:
                self._key, self._value = None, None  # let the previous one go first
                self._value = load()
                self._key = key
            return cast(T, self._value)

    def clear(self) -> None:
        with self._lock:
            self._key, self._value = None, None


@dataclass(frozen=True)
class StepsIndex:
    """Which trajectories each steps file of one ingest task holds (ids only, no text)."""

    files: tuple[tuple[Path, frozenset[str]], ...]

    @classmethod
    def read(cls, paths: Sequence[Path]) -> StepsIndex:
        files = []
        for path in paths:
            ids = read_file(path, ["trajectory_id"]).column(0).unique().to_pylist()
            files.append((path, frozenset(ids)))
        return cls(tuple(files))

    def holding(self, ids: Sequence[str]) -> list[Path]:
        """The steps files with a step of any of these trajectories, in file order."""
        wanted = set(ids)
        return [path for path, held in self.files if not held.isdisjoint(wanted)]


def _eligible(path: Path) -> Indexed:
    return Indexed.of(read_eligible(path))


class ShardTables:
    """Slices shards out of their ingest files, keeping one trajectories file, one task's
    steps index and one steps file at a time."""

    def __init__(self) -> None:
        self._trajectories = LastOne()
        self._index = LastOne()
        self._steps = LastOne()

    def trajectory_rows(self, path: Path, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of these trajectories in `path` (the last one of a repeated id)."""
        table = self._trajectories.get(signature([path]), lambda: Indexed.of(read_file(path)))
        return table.take(ids, last_only=True)

    def step_rows(self, paths: Sequence[Path], ids: Sequence[str]) -> list[dict[str, Any]]:
        """The eligible step rows of these trajectories in the steps files `paths`, file by
        file (each file's rows in file order)."""
        index = self._index.get(signature(paths), lambda: StepsIndex.read(paths))
        rows: list[dict[str, Any]] = []
        for path in index.holding(ids):
            table = self._steps.get(signature([path]), functools.partial(_eligible, path))
            rows.extend(table.take(ids))
        return rows

    def warm(self, trajectories_file: Path, steps_files: Sequence[Path]) -> None:
        """Load what the first shard of `trajectories_file` reads (the file, its task's steps
        index and first steps file), so that the shard is sliced, not read, when it comes."""
        self.trajectory_rows(trajectories_file, [])
        index = self._index.get(signature(steps_files), lambda: StepsIndex.read(steps_files))
        if index.files:
            first = index.files[0][0]
            self._steps.get(signature([first]), functools.partial(_eligible, first))

    def clear(self) -> None:
        for cache in (self._trajectories, self._index, self._steps):
            cache.clear()


SHARD_TABLES = ShardTables()
