"""The type check that keeps one unstorable record from failing a whole shard."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from builder.ingest.formats.mini_swe_agent import ADAPTER
from builder.ingest.formats.source import Source
from builder.ingest.storable import misfit
from builder.storage.parquet_shards import ShardWriter
from schemas.trajectories import TRAJECTORY_SCHEMA, Message, ToolCall, TrajectoryRecord
from tests.paths import SHARED

MINI = SHARED / "mini-swe-agent/github_issue.traj.json"


def _record() -> TrajectoryRecord:
    (record,) = ADAPTER.load(Source(MINI))
    assert isinstance(record, TrajectoryRecord)
    return record


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"agent_model": 0.5}, "agent_model"),
        ({"api_calls": 2**63}, "api_calls"),
        ({"resolved": "yes"}, "resolved"),
        ({"cost_usd": 10**400}, "cost_usd"),
        ({"messages": [Message("user", 7)]}, "messages[0].content"),  # type: ignore[arg-type]
        ({"messages": [Message("assistant", "", [ToolCall("a", 5, "{}")])]},  # type: ignore[arg-type]
         "messages[0].tool_calls[0].name"),
    ],
)  # fmt: skip
def test_each_misfit_is_named_and_arrow_would_indeed_refuse_it(
    change: dict, field: str, tmp_path: Path
) -> None:
    bad = dataclasses.replace(_record(), **change)
    assert misfit(bad) == field
    refused = pytest.raises((TypeError, ValueError, OverflowError))  # what the net saves us from
    with refused, ShardWriter(tmp_path, TRAJECTORY_SCHEMA, "t") as writer:
        writer.add(bad)


def test_a_real_record_fits() -> None:
    assert misfit(_record()) is None
