"""Codex CLI rollouts: the two layouts under tests/ingest/formats/data/codex-cli (written by us
from Codex's rollout format, see tests/SOURCES.md), checked against counts read from the raw
lines with `json`, and handcrafted edge cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.codex_cli import ADAPTER
from builder.ingest.formats.source import Source
from builder.steps.replay import agent_context
from schemas.quarantine import QuarantineRecord
from tests.ingest.formats.common import (
    DATA,
    assert_paired,
    data_files,
    loaded,
    sample_files,
    steps_of,
)

NEW, OLD = sorted(data_files("codex-cli"), key=lambda p: "2025-08" in p.name)
OUTPUTS = ("function_call_output", "custom_tool_call_output")
CALLS = ("function_call", "custom_tool_call", "local_shell_call")


def raw_items(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(kind, item) per line, read with json alone: `payload` lines, or the older bare items."""
    found = []
    for line in path.read_text().splitlines():
        value = json.loads(line)
        if "payload" in value:
            found.append((value["type"], value["payload"]))
        elif "type" in value:
            found.append(("response_item", value))
    return found


def raw_windows(path: Path) -> list[list[dict[str, Any]]]:
    """The response items of each context window (split at `compacted`)."""
    windows: list[list[dict[str, Any]]] = [[]]
    for kind, item in raw_items(path):
        if kind == "compacted":
            windows.append(list(item.get("replacement_history") or []))
        elif kind == "response_item":
            windows[-1].append(item)
    return windows


@pytest.mark.parametrize("path", [NEW, OLD], ids=lambda p: p.name[:18])
def test_counts_equal_the_raw_lines(path: Path) -> None:
    records = loaded(ADAPTER, path)
    windows = raw_windows(path)
    assert len(records) == len(windows)
    for record, items in zip(records, windows, strict=True):
        calls = [i for i in items if i["type"] in CALLS]
        outputs = [i for i in items if i["type"] in OUTPUTS]
        messages = record.messages
        assert sum(len(m.tool_calls) for m in messages) == len(calls)
        assert [m.tool_call_id for m in messages if m.role == "tool"] == [
            o["call_id"] for o in outputs
        ] or sorted(m.tool_call_id for m in messages if m.role == "tool") == sorted(
            o["call_id"] for o in outputs
        )
        assert_paired(messages)
        steps = steps_of(ADAPTER, record)
        assert len(steps) == len(outputs)  # every output is one observation, nothing else is
        by_id = {o["call_id"]: o["output"] for o in outputs}
        for step in steps:
            raw = by_id[messages[step.observation_message_index].tool_call_id]
            if raw.startswith('{"output":'):
                assert step.observation == json.loads(raw)["output"]
            else:  # the freeform header (Exit code / Wall time / ... / Output:) stays out
                assert (
                    raw.endswith(step.observation)
                    and "Output:\n" in raw[: -len(step.observation) or None]
                )


def test_reasoning_is_counted_and_never_becomes_text() -> None:
    (first, second) = loaded(ADAPTER, NEW)
    encrypted = [i["encrypted_content"] for k, i in raw_items(NEW) if i.get("type") == "reasoning"]
    summaries = [
        s["text"] for k, i in raw_items(NEW) if i.get("type") == "reasoning" for s in i["summary"]
    ]
    assert encrypted and summaries
    text = json.dumps([m.content for r in (first, second) for m in r.messages])
    assert not any(e[:40] in text for e in encrypted)
    assert not any(s in text for s in summaries)
    counts = json.loads(first.metadata)["counts"]
    assert counts["reasoning_items"] == counts["encrypted_reasoning"] == len(encrypted)


def test_a_compaction_starts_a_new_window_and_is_never_a_step() -> None:
    (first, second) = loaded(ADAPTER, NEW)
    session = json.loads(NEW.read_text().splitlines()[0])["payload"]["id"]
    assert (first.native_id, second.native_id) == (session, f"{session}:1")
    summary = next(i for k, i in raw_items(NEW) if k == "compacted")["message"]
    assert not any(summary in m.content for m in first.messages)
    assert any(summary in m.content for m in second.messages)  # the new window's history
    for record in (first, second):
        for step in steps_of(ADAPTER, record):
            assert record.messages[step.observation_message_index].role == "tool"
    # the first window's last step has no next action in that window: the model acted after
    # the compaction on another context
    assert steps_of(ADAPTER, first)[-1].ineligible_reason == "last_step"


def test_parallel_calls_keep_their_own_actions_and_shell_commands_are_lifted() -> None:
    (first, second) = loaded(ADAPTER, NEW)
    steps = steps_of(ADAPTER, first, min_tokens=0)
    parallel = [s for s in steps if s.num_actions == 2]
    assert {s.action.command for s in parallel} == {
        "nl -ba textstats/stats.py",
        "sed -n '1,80p' tests/test_stats.py",
    }
    assert all(s.ineligible_reason == "multiple_actions" for s in parallel)
    tools = {s.action.tool: s.action.command for s in steps + steps_of(ADAPTER, second, 0)}
    assert tools["shell"] == "python -m pytest -q tests/test_stats.py"  # bash -lc unwrapped
    assert tools["apply_patch"] is None  # an edit, not a shell command
    assert tools["exec_command"] == "head -n 44 docs/changelog.md"
    assert tools["local_shell"] == "git log --oneline -n 5"
    metadata = json.loads(second.metadata)
    assert metadata["tool_groups"] == [
        "shell",
        "shell_command",
        "unified_exec",
        "local_shell",
        "apply_patch",
        "plan",
        "view_image",
    ]


def test_the_json_output_of_older_versions_is_rewritten_around_a_new_payload() -> None:
    (record,) = loaded(ADAPTER, OLD)
    step = steps_of(ADAPTER, record)[1]
    message = record.messages[step.observation_message_index]
    context = agent_context(record, step, ADAPTER, 'line one\nline "two"')
    written = json.loads(context[step.observation_message_index].content)
    assert written == {**json.loads(message.content), "output": 'line one\nline "two"'}
    raw = agent_context(record, step, ADAPTER)  # the raw observation is sent as logged
    assert raw[step.observation_message_index].content == message.content


def test_run_fields_come_from_session_meta_and_turn_context() -> None:
    (first, _) = loaded(ADAPTER, NEW)
    meta = json.loads(NEW.read_text().splitlines()[0])["payload"]
    assert first.system_prompt == meta["base_instructions"]["text"]
    assert first.messages[0].role == "system" and first.messages[0].content == first.system_prompt
    assert first.harness_version == meta["cli_version"] and first.agent_model == "gpt-5-codex"
    assert first.task is not None and first.task.startswith('summarize("") raises')
    (old,) = loaded(ADAPTER, OLD)
    assert old.system_prompt is None and old.messages[0].role == "user"  # instructions: null


def test_registry_detects_only_rollouts() -> None:
    for path in data_files("codex-cli"):
        assert detect(Source(path)).name == "codex-cli"
    for path in sample_files() + [p for p in DATA.rglob("*.json*") if "codex" not in str(p)]:
        assert not ADAPTER.detect(Source(path)), path


def test_a_bad_line_is_quarantined_and_the_rest_read(tmp_path: Path) -> None:
    lines = NEW.read_text().splitlines()
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    results = list(ADAPTER.load(Source(path)))
    bad = [r for r in results if isinstance(r, QuarantineRecord)]
    assert len(bad) == 1 and bad[0].record_index == 1 and str(path) in bad[0].message
    assert len(results) == 3


def test_a_summary_only_compaction_starts_from_the_system_prompt_and_the_summary(
    tmp_path: Path,
) -> None:
    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "t", "type": kind, "payload": payload})

    call = {
        "type": "function_call",
        "name": "shell_command",
        "call_id": "c1",
        "arguments": json.dumps({"command": "ls"}),
    }
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            [
                line("session_meta", {"id": "s", "base_instructions": {"text": "SYSTEM"}}),
                line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "go"}],
                    },
                ),
                line("response_item", call),
                line(
                    "response_item",
                    {"type": "function_call_output", "call_id": "c1", "output": "a\nb"},
                ),
                line("compacted", {"message": "SUMMARY"}),
                line("response_item", {**call, "call_id": "c2"}),
                line(
                    "response_item",
                    {"type": "function_call_output", "call_id": "c2", "output": "c"},
                ),
                line(
                    "response_item",
                    {"type": "function_call_output", "call_id": "c1", "output": "late"},
                ),
            ]
        )
        + "\n"
    )
    _first, second = loaded(ADAPTER, path)
    assert [(m.role, m.content) for m in second.messages[:2]] == [
        ("system", "SYSTEM"),
        ("user", "SUMMARY"),
    ]
    assert second.messages[-1].role == "user"  # an output of an earlier window's call
    assert json.loads(second.metadata)["counts"]["orphan_outputs"] == 1
