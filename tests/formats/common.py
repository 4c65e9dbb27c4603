"""Helpers shared by the format adapter tests."""

from __future__ import annotations

from pathlib import Path

from schemas.trajectories import Message
from tests.paths import SHARED as SAMPLES

__all__ = ["SAMPLES", "assert_paired", "sample_files"]


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
