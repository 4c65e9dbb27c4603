"""Conversions between typed records (dataclasses) and Arrow tables."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import pyarrow as pa

from schemas import SCHEMA_VERSION

T = TypeVar("T")


RAW_PREFIX = "raw"
ROUND_FIELDS = (
    # 0: offline (raw prefixes); 1, 2, ...: online relabel rounds (README, "Online rounds")
    pa.field("round", pa.int64(), nullable=False),
    # what the agent saw of earlier observations: raw | compressed | deployed
    pa.field("prefix_mode", pa.string(), nullable=False),
)
"""The columns every NAP row carries, so rows of several rounds can be merged and told apart."""


def with_version(schema: pa.Schema, table: str) -> pa.Schema:
    """Stamp a schema with its table name and version so files are self-describing."""
    return schema.with_metadata(
        {
            b"nap_builder.table": table.encode(),
            b"nap_builder.schema_version": SCHEMA_VERSION.encode(),
        }
    )


_FIELDS: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """Field names of a record type (cached: `dataclasses.fields` is slow on hot paths)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def to_row(record: Any) -> dict[str, Any]:
    """A record as a plain dict (nested dataclasses become dicts).

    Unlike `dataclasses.asdict` this does not deep-copy values: records are immutable, and
    the copy dominated the cost of writing large tables. Whether a value is a record is
    decided per type, once (`dataclasses.is_dataclass` per value was a quarter of the
    ingest's CPU).
    """
    row = {}
    for name in field_names(type(record)):
        value = getattr(record, name)
        if isinstance(value, list):
            if value and _is_record_type(type(value[0])):
                value = [to_row(v) for v in value]
        elif _is_record_type(type(value)):
            value = to_row(value)
        row[name] = value
    return row


_IS_RECORD: dict[type, bool] = {}


def _is_record_type(kind: type) -> bool:
    found = _IS_RECORD.get(kind)
    if found is None:
        found = _IS_RECORD[kind] = dataclasses.is_dataclass(kind)
    return found


def to_table(records: Iterable[Any], schema: pa.Schema) -> pa.Table:
    """Build an Arrow table with the declared schema; a missing or extra field is an error."""
    rows = [to_row(r) for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def from_row(cls: type[T], row: Mapping[str, Any]) -> T:
    """Rebuild a (possibly nested) record from a row read back from Arrow."""
    kwargs: dict[str, Any] = {}
    for name, sub in _nested_fields(cls):
        value = row.get(name)
        if sub is not None and value is not None:
            if isinstance(value, list):
                value = [from_row(sub, v) for v in value]
            else:
                value = from_row(sub, value)
        kwargs[name] = value
    return cls(**kwargs)


_NESTED: dict[type, tuple[tuple[str, type | None], ...]] = {}


def _nested_fields(cls: type) -> tuple[tuple[str, type | None], ...]:
    """(field name, nested record type or None) per field, cached per class."""
    found = _NESTED.get(cls)
    if found is None:
        found = _NESTED[cls] = tuple((f.name, _record_type(f)) for f in dataclasses.fields(cls))
    return found


def _record_type(field: dataclasses.Field[Any]) -> type | None:
    meta = field.metadata.get("record")
    return meta if isinstance(meta, type) else None


def nested(record_type: type, **kwargs: Any) -> Any:
    """A dataclass field holding a nested record (or list of them), known to `from_row`."""
    return dataclasses.field(metadata={"record": record_type}, **kwargs)
