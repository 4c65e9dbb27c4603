"""Gemini CLI sessions: the three shapes under tests/ingest/formats/data/gemini-cli (written by
us from Gemini CLI's recording format, see tests/SOURCES.md), checked against counts read from
the raw files with `json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builder.ingest.formats import detect
from builder.ingest.formats.gemini_cli import ADAPTER, split_shell_output
from builder.ingest.formats.source import Source
from tests.ingest.formats.common import (
    DATA,
    assert_paired,
    data_files,
    loaded,
    sample_files,
    steps_of,
)

FOLDER = DATA / "gemini-cli"
SESSION = FOLDER / "session-2025-11-04T09-30-9f1c2d3e.json"
JSONL = FOLDER / "session-2026-01-20T14-05-4b7e9a10.jsonl"
CHECKPOINT = FOLDER / "checkpoint-empty-text.json"


def jsonl_messages(path: Path) -> list[dict[str, Any]]:
    """The message records as Gemini CLI loads them: last write per id, rewinds applied."""
    kept: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        value = json.loads(line)
        if "$rewindTo" in value:
            ids = list(kept)
            for key in ids[ids.index(value["$rewindTo"]) :]:
                del kept[key]
        elif "id" in value:
            kept[value["id"]] = value
    return list(kept.values())


def test_session_counts_equal_the_raw_file() -> None:
    raw = json.loads(SESSION.read_text())["messages"]
    (record,) = loaded(ADAPTER, SESSION)
    calls = [c for m in raw if m["type"] == "gemini" for c in m.get("toolCalls", [])]
    messages = record.messages
    assert sum(m.role == "user" for m in messages) == sum(m["type"] == "user" for m in raw)
    assert sum(m.role == "assistant" for m in messages) == sum(m["type"] == "gemini" for m in raw)
    assert [c.id for m in messages for c in m.tool_calls] == [c["id"] for c in calls]
    assert sum(m.role == "tool" for m in messages) == len(calls)
    assert_paired(messages)
    steps = steps_of(ADAPTER, record)
    assert len(steps) == len(calls)
    assert record.prompt_tokens == sum(m["tokens"]["input"] for m in raw if "tokens" in m)
    assert json.loads(record.metadata)["counts"]["skipped:info"] == 1  # UI notice, not chat
    thoughts = [t["description"] for m in raw for t in m.get("thoughts", [])]
    assert not any(t in m.content for t in thoughts for m in messages)


def test_only_the_shell_output_is_compressed() -> None:
    raw = json.loads(SESSION.read_text())["messages"]
    outputs = [
        c["result"][0]["functionResponse"]["response"]["output"]
        for m in raw
        for c in m.get("toolCalls", [])
        if c["name"] == "run_shell_command"
        and "output" in c["result"][0]["functionResponse"]["response"]
    ]
    (record,) = loaded(ADAPTER, SESSION)
    shell = [s for s in steps_of(ADAPTER, record) if s.action.tool == "run_shell_command"]
    assert [s.action.command for s in shell] == [
        "python -m pytest -q tests/test_stats.py",
        "python -m pytest -q",
        "git push origin main",
    ]
    for step, text in zip(shell, outputs, strict=False):
        body = text.split("\nOutput: ", 1)[1].split("\nError: ", 1)[0]
        assert step.observation == body


def test_shell_envelopes_of_each_version() -> None:
    assert split_shell_output("Output: a\nb\nExit Code: 1\nProcess Group PGID: 9") == (
        "Output: ",
        "a\nb",
        "\nExit Code: 1\nProcess Group PGID: 9",
    )
    assert split_shell_output("Command: ls\nDirectory: (root)\nStdout: x\nStderr: y\nz") == (
        "Command: ls\nDirectory: (root)\nStdout: ",
        "x",
        "\nStderr: y\nz",
    )
    assert split_shell_output("plain") == ("", "plain", "")


def test_jsonl_session_applies_updates_and_rewinds() -> None:
    kept = jsonl_messages(JSONL)
    (record,) = loaded(ADAPTER, JSONL)
    users = [m.content for m in record.messages if m.role == "user"]
    assert users == [m["content"][0]["text"] for m in kept if m["type"] == "user"]
    assert "Now delete docs/usage.md" not in users  # rewound
    calls = [c["id"] for m in kept for c in m.get("toolCalls", [])]
    assert [c.id for m in record.messages for c in m.tool_calls] == calls
    assert len(steps_of(ADAPTER, record)) == len(calls)
    assert json.loads(record.metadata)["summary"] == "Locate the uses of summarize()"  # $set


def test_checkpoint_is_the_api_history() -> None:
    raw = json.loads(CHECKPOINT.read_text())
    (record,) = loaded(ADAPTER, CHECKPOINT)
    calls = [p["functionCall"]["id"] for c in raw for p in c["parts"] if "functionCall" in p]
    answers = [
        p["functionResponse"]["id"] for c in raw for p in c["parts"] if "functionResponse" in p
    ]
    assert [c.id for m in record.messages for c in m.tool_calls] == calls
    assert [m.tool_call_id for m in record.messages if m.role == "tool"] == answers
    thought = next(p["text"] for c in raw for p in c["parts"] if p.get("thought"))
    assert not any(thought in m.content for m in record.messages)
    assert len(steps_of(ADAPTER, record)) == len(calls)


def test_registry_detects_only_gemini_files() -> None:
    for path in data_files("gemini-cli"):
        assert detect(Source(path)).name == "gemini-cli"
    for path in sample_files() + [p for p in DATA.rglob("*.json*") if "gemini" not in str(p)]:
        assert not ADAPTER.detect(Source(path)), path


def test_a_jsonl_without_its_session_line_is_quarantined(tmp_path: Path) -> None:
    lines = JSONL.read_text().splitlines()
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([lines[0], "{oops", *lines[1:]]) + "\n")
    results = list(ADAPTER.load(Source(path)))
    assert [type(r).__name__ for r in results] == ["QuarantineRecord", "TrajectoryRecord"]
    path.write_text("\n".join(lines[1:]) + "\n")
    (only,) = list(ADAPTER.load(Source(path)))
    assert type(only).__name__ == "QuarantineRecord" and "no session line" in only.message
