"""Atomic, size-bounded Parquet shard writing: the only place tables touch the disk."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.common import field_names, to_table

FLUSH_BYTES = 24 * 1024 * 1024
RELEASE_BYTES = 64 * 1024 * 1024


def approx_size(record: Any) -> int:
    """A cheap estimate of a record's text size (top-level strings and message contents), to
    bound buffers; exactness does not matter, speed does."""
    size = 64
    for name in field_names(type(record)):
        value = getattr(record, name)
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, list):
            size += sum(len(getattr(item, "content", "") or "") + 64 for item in value)
    return size


_SHORT_TEXT = frozenset(
    {"source_format", "source_path", "harness", "error_kind", "ineligible_reason", "role"}
)


def statistics_columns(table: pa.Table) -> list[str]:
    """Columns that get Parquet min/max statistics: flat numbers, flags and short labels.

    Statistics are what readers filter row groups with (ids, indices, `eligible`); on a text
    column they copy its extreme values, which for one 200 MB observation cost ~1 GB of
    memory in the writer and are dropped from the file anyway (over the 4 KiB limit).
    """
    names = []
    for field in table.schema:
        if pa.types.is_nested(field.type):
            continue
        text = pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
        if text and not (field.name.endswith("_id") or field.name in _SHORT_TEXT):
            continue
        names.append(field.name)
    return names


def write_table_atomic(table: pa.Table, path: Path) -> None:
    """Write a Parquet file so that readers see all of it or nothing (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")  # no .parquet suffix: globs skip it
    pq.write_table(table, tmp, compression="zstd", write_statistics=statistics_columns(table))
    os.replace(tmp, path)


class ShardWriter:
    """Buffers records of one table and writes `<prefix>-NNNN.parquet` parts atomically."""

    def __init__(
        self, directory: Path, schema: pa.Schema, prefix: str, flush_bytes: int = FLUSH_BYTES
    ) -> None:
        self.directory = directory
        self.schema = schema
        self.prefix = prefix
        self.flush_bytes = flush_bytes
        self.paths: list[Path] = []
        self.rows = 0
        self._buffer: list[Any] = []
        self._size = 0

    def add(self, record: Any) -> None:
        self._buffer.append(record)
        self._size += approx_size(record)
        if self._size >= self.flush_bytes:
            self.flush()

    def take(self, records: list[Any]) -> None:
        """`add` each record, emptying `records`: while a full buffer is written, nothing but
        the buffer holds its records, so their Python texts go before Parquet encodes."""
        while records:
            self._buffer.append(records.pop(0))
            self._size += approx_size(self._buffer[-1])
            if self._size >= self.flush_bytes:
                self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        path = self.directory / f"{self.prefix}-{len(self.paths):04d}.parquet"
        records, self._buffer, self._size = self._buffer, [], 0
        table = to_table(records, self.schema)
        self.rows += len(records)
        del records  # the Python texts may go while Parquet encodes their Arrow copies
        write_table_atomic(table, path)
        big = table.nbytes >= RELEASE_BYTES
        del table
        self.paths.append(path)
        if big:  # mimalloc keeps freed pages; a huge shard's would stay for the whole run
            pa.default_memory_pool().release_unused()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.flush()
