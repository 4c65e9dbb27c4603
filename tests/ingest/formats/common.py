"""Helpers shared by the format adapter tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemas.trajectories import Message
from tests.paths import SHARED as SAMPLES

__all__ = [
    "DATA",
    "SAMPLES",
    "assert_paired",
    "data_files",
    "loaded",
    "observation_count",
    "sample_files",
    "steps_of",
]


def sample_files() -> list[Path]:
    """Every real trajectory file under ../shared/trajectories (sidecars included)."""
    return sorted(p for p in SAMPLES.rglob("*") if p.suffix in {".json", ".jsonl", ".traj"})


def assert_paired(messages: list[Message]) -> None:
    """Every tool message answers a call of the assistant turn before its tool block."""
    for i, m in enumerate(messages):
        if m.role != "tool":
            continue
        owner = next(p for p in reversed(messages[:i]) if p.role != "tool")
        assert owner.role == "assistant", (i, owner.role)
        assert m.tool_call_id in {c.id for c in owner.tool_calls}, (i, m.tool_call_id)


def observation_count(messages: list[Message]) -> int:
    """Observations by the step rule of text-reply harnesses (mini-swe-agent, SWE-agent, chat
    messages), written independently of `builder.steps.pairing`: the tool messages after a tool-call
    turn, else the next message when it is a user message. Tool-call harnesses (Claude Code,
    OpenHands) count tool messages only; tests/steps/test_pairing.py counts those from the raw
    files."""
    count = 0
    for i, m in enumerate(messages):
        if m.role != "assistant" or m.is_demo:
            continue
        if m.tool_calls:
            for later in messages[i + 1 :]:
                if later.role == "assistant":
                    break
                count += later.role == "tool"
        elif i + 1 < len(messages) and messages[i + 1].role == "user":
            count += 1
    return count


DATA = Path(__file__).parent / "data"  # samples written by us from each harness's format


def data_files(harness: str) -> list[Path]:
    """The sample files of one harness under tests/ingest/formats/data (see tests/SOURCES.md)."""
    return sorted(p for p in (DATA / harness).rglob("*") if p.suffix in {".json", ".jsonl"})


def loaded(adapter: Any, path: Path) -> list[Any]:
    """Every record the adapter yields for `path`; none may be quarantined."""
    from builder.ingest.formats.source import Source
    from schemas.trajectories import TrajectoryRecord

    records = list(adapter.load(Source(path)))
    assert all(isinstance(r, TrajectoryRecord) for r in records), records
    return records


def steps_of(adapter: Any, record: Any, min_tokens: int = 256) -> list[Any]:
    from builder.steps.pairing import EligibilityRules, build_steps

    return list(build_steps(record, adapter, EligibilityRules(min_tokens=min_tokens)))
