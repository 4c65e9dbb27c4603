"""`quarantine` table: every file or record that could not be used, and why."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import with_version

QUARANTINE_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("source_path", pa.string(), nullable=False),
            pa.field("record_index", pa.int64()),  # null when the whole file is bad
            pa.field("source_format", pa.string()),
            pa.field("error_kind", pa.string(), nullable=False),
            pa.field("message", pa.string(), nullable=False),
        ]
    ),
    "quarantine",
)


@dataclass(frozen=True, slots=True)
class QuarantineRecord:
    source_path: str
    record_index: int | None
    source_format: str | None
    error_kind: str
    message: str
