"""The run folder's tables as the report and the plots read them.

`scan_table` is a lazy scan of every part of a table. Inside `loaded(out_dir)` it answers from
one read of each table instead, kept to the columns the report and the plots use
(`REPORT_COLUMNS`: ids, flags, counts and the short action structs, no observation or model
text), so that their ~40 queries do not each reopen every shard's files: on the bench run
(20 shards) the report took 0.13 s that way and ~0.05 s this way.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa

from schemas.candidates import CANDIDATE_SCHEMA
from schemas.judgements import JUDGEMENT_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.quarantine import QUARANTINE_SCHEMA
from schemas.references import REFERENCE_SCHEMA
from schemas.round_steps import ROUND_STEP_SCHEMA
from schemas.steps import STEP_SCHEMA
from schemas.supervision import SUPERVISION_SCHEMA
from schemas.trajectories import TRAJECTORY_SCHEMA

SCHEMAS: dict[str, pa.Schema] = {
    "trajectories": TRAJECTORY_SCHEMA,
    "quarantine": QUARANTINE_SCHEMA,
    "steps": STEP_SCHEMA,
    "candidates": CANDIDATE_SCHEMA,
    "references": REFERENCE_SCHEMA,
    "judgements": JUDGEMENT_SCHEMA,
    "supervision": SUPERVISION_SCHEMA,
    "preferences": PREFERENCE_SCHEMA,
    "round_steps": ROUND_STEP_SCHEMA,
}
STEP_KEY = ["trajectory_id", "step_index"]
REPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "trajectories": ("trajectory_id",),
    "quarantine": ("error_kind",),
    "steps": (*STEP_KEY, "eligible", "ineligible_reason", "observation_tokens", "action"),
    "candidates": (
        *STEP_KEY, "candidate_index", "source", "valid", "invalid_reason", "duplicate_of",
    ),
    "references": (
        *STEP_KEY, "reference_index", "mode", "action", "format_error", "similarity_to_logged",
    ),
    "judgements": (
        *STEP_KEY, "candidate_index", "is_control", "passed", "format_error", "attempts",
    ),
    "supervision": (
        *STEP_KEY, "candidate_index", "is_fallback", "rank", "raw_tokens", "rendered_tokens",
        "raw_chars", "rendered_chars",
    ),
    "preferences": (*STEP_KEY,),
    "round_steps": (
        *STEP_KEY, "round", "prefix_mode", "prefix_compressor", "prefix_replaced", "processed",
        "deployed_changed", "deployed_passed",
    ),
}  # fmt: skip

_loaded: contextvars.ContextVar[tuple[Path, dict[str, pl.LazyFrame]] | None] = (
    contextvars.ContextVar("report_tables", default=None)
)


def scan_table(out_dir: Path, table: str) -> pl.LazyFrame:
    """All `OUT/<table>/*.parquet` parts, lazily; a missing table is an empty frame. Within
    `loaded(out_dir)`, the table as read once there (report columns only)."""
    active = _loaded.get()
    if active is not None and active[0] == Path(out_dir) and table in active[1]:
        return active[1][table]
    return _scan(out_dir, table)


@contextlib.contextmanager
def loaded(out_dir: Path) -> Iterator[None]:
    """Read each table once, to its report columns, for the queries made inside (already
    loaded for this folder: nothing is read again)."""
    active = _loaded.get()
    if active is not None and active[0] == Path(out_dir):
        yield
        return
    frames = {}
    for table, columns in REPORT_COLUMNS.items():
        frames[table] = _scan(out_dir, table).select(columns).collect().lazy()
    token = _loaded.set((Path(out_dir), frames))
    try:
        yield
    finally:
        _loaded.reset(token)


def _scan(out_dir: Path, table: str) -> pl.LazyFrame:
    folder = Path(out_dir) / table
    parts = sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))
    if not parts:
        return pl.from_arrow(SCHEMAS[table].empty_table()).lazy()  # type: ignore[union-attr]
    return pl.scan_parquet([str(p) for p in parts])
