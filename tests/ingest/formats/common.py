"""Helpers shared by the format adapter tests."""

from __future__ import annotations

from pathlib import Path

from schemas.trajectories import Message
from tests.paths import SHARED as SAMPLES

__all__ = ["SAMPLES", "assert_paired", "observation_count", "sample_files"]


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
