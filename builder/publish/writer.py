"""Writing one config-split as numbered Parquet shards, and scrubbing batches on the way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.scrub import Scrubber

SHARD_NAME = "{split}-{index:05d}-of-{total:05d}.parquet"


class ShardWriter:
    """Writes one config-split as numbered shards; names get their total at `finish`."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema, max_rows: int) -> None:
        self.folder, self.split, self.schema, self.max_rows = folder, split, schema, max_rows
        self.parts: list[Path] = []
        self.total_rows = 0
        self.total_bytes = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows_in_part = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if self._writer is None or self._rows_in_part >= self.max_rows:
            self._open_next()
        assert self._writer is not None
        self._writer.write_batch(batch)
        self._rows_in_part += batch.num_rows
        self.total_rows += batch.num_rows
        self.total_bytes += batch.nbytes

    def _open_next(self) -> None:
        self._close()
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f".{self.split}-{len(self.parts):05d}.parquet.tmp"
        self.parts.append(path)
        self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self._rows_in_part = 0

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finish(self) -> list[Path]:
        self._close()
        final = []
        for index, part in enumerate(self.parts):
            name = SHARD_NAME.format(split=self.split, index=index, total=len(self.parts))
            final.append(part.rename(self.folder / name))
        return final


def scrub_batch(batch: pa.RecordBatch, scrubber: Scrubber) -> pa.RecordBatch:
    """Scrub every string (also inside lists and structs); other columns pass through."""
    columns = []
    for column, schema_field in zip(batch.columns, batch.schema, strict=True):
        if _has_text(schema_field.type):
            values = [scrubber.scrub_value(v) for v in column.to_pylist()]
            column = pa.array(values, type=schema_field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _has_text(dtype: pa.DataType) -> bool:
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _has_text(dtype.value_type)
    if pa.types.is_struct(dtype):
        return any(_has_text(dtype.field(i).type) for i in range(dtype.num_fields))
    return False
