"""Tool-calling trajectories that recorded no schemas are replayed with their harness's tools
(or tools inferred from the calls), checked against the calls read straight from the raw files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builder.ingest.formats import detect
from builder.ingest.formats.source import Source
from builder.llm.anthropic_provider import build_request
from builder.llm.protocol import ChatRequest
from builder.steps.pairing import EligibilityRules, build_steps
from builder.steps.replay import agent_context, tools_of
from builder.steps.tool_sets import INFERRED_NOTE, harness_tools, resolve_tools, tool_name
from schemas.trajectories import Message, ToolCall, TrajectoryRecord
from tests.paths import SHARED

CLAUDE = SHARED / "claude-code/hello-world-script/transcript.jsonl"
SWE_FC = SHARED / "swe-agent/marshmallow-code__marshmallow-1867.traj"


def _load(path: Path) -> list[TrajectoryRecord]:
    source = Source(path)
    return [t for t in detect(source).load(source) if isinstance(t, TrajectoryRecord)]


def _raw_claude_calls() -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for line in CLAUDE.read_text().splitlines():
        content = (json.loads(line).get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                calls.append((block["name"], block["input"]))
    return calls


def _raw_swe_calls() -> list[tuple[str, dict[str, Any]]]:
    doc = json.loads(SWE_FC.read_text())
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for m in doc["history"]
        for c in m.get("tool_calls") or []
    ]


def _schema(tools: tuple[dict[str, Any], ...], name: str) -> dict[str, Any]:
    return next(t["function"]["parameters"] for t in tools if tool_name(t) == name)


def _covers(tools: tuple[dict[str, Any], ...], calls: list[tuple[str, dict[str, Any]]]) -> None:
    for name, arguments in calls:
        schema = _schema(tools, name)
        assert set(arguments) <= set(schema["properties"]), (name, arguments)
        assert set(schema["required"]) <= set(arguments), (name, arguments)


def test_claude_code_gets_the_harness_tools_that_cover_every_logged_call() -> None:
    calls = _raw_claude_calls()
    assert {n for n, _ in calls} == {"Write", "Bash"}
    [traj] = _load(CLAUDE)
    assert traj.tools is None  # the transcript records no schema
    found = resolve_tools(traj)
    assert found.source == "harness" and found.tools is not None
    assert {"Bash", "Read", "Edit", "Write", "Glob", "Grep"} <= {tool_name(t) for t in found.tools}
    _covers(found.tools, calls)
    steps = list(build_steps(traj, detect(Source(CLAUDE)), EligibilityRules(min_tokens=0)))
    assert steps and {s.tool_schemas for s in steps} == {"harness"}


def test_swe_agent_function_calling_gets_the_bundles_its_replay_config_names() -> None:
    doc = json.loads(SWE_FC.read_text())
    bundles = [b["path"] for b in doc["replay_config"]["agent"]["tools"]["bundles"]]
    assert bundles == ["tools/defaults", "tools/search", "tools/edit_replace", "tools/submit"]
    [traj] = _load(SWE_FC)
    assert json.loads(traj.metadata)["tool_groups"] == [
        "bash", "defaults", "search", "edit_replace", "submit",
    ]  # fmt: skip
    found = resolve_tools(traj)
    assert found.source == "harness" and found.tools is not None
    names = [tool_name(t) for t in found.tools]
    assert names == [
        "bash", "goto", "open", "create", "scroll_up", "scroll_down", "find_file",
        "search_dir", "search_file", "edit", "insert", "submit",
    ]  # fmt: skip
    _covers(found.tools, _raw_swe_calls())
    # the replace-style `edit` of this run's bundle, not the line-range one of edit_linting
    assert set(_schema(found.tools, "edit")["required"]) == {"search", "replace"}


def test_every_eligible_step_of_both_samples_sends_tools() -> None:
    for path in (CLAUDE, SWE_FC):
        [traj] = _load(path)
        adapter = detect(Source(path))
        steps = [s for s in build_steps(traj, adapter, EligibilityRules(min_tokens=0))]
        eligible = [s for s in steps if s.eligible]
        assert eligible, path
        assert all(tools_of(traj) for _ in eligible)


def _traj(harness: str, calls: list[ToolCall], tools: str | None = None) -> TrajectoryRecord:
    messages = [Message("user", "task")]
    for call in calls:
        messages += [Message("assistant", "", [call]), Message("tool", "out", tool_call_id=call.id)]
    return TrajectoryRecord(
        "t", "x", "x", 0, None, harness, None, None, "task", None, tools, messages
    )


def test_an_unknown_harness_gets_schemas_inferred_from_its_calls() -> None:
    traj = _traj(
        "someharness",
        [
            ToolCall("a", "run_shell", json.dumps({"cmd": "ls", "timeout": 5})),
            ToolCall("b", "run_shell", json.dumps({"cmd": "pwd"})),
            ToolCall("c", "bad name!", "{}"),
        ],
    )
    found = resolve_tools(traj)
    assert found.source == "inferred" and found.tools is not None
    [tool] = found.tools  # a name no API accepts is left out
    function = tool["function"]
    assert function["name"] == "run_shell" and function["description"] == INFERRED_NOTE
    assert function["parameters"]["properties"] == {
        "cmd": {"type": "string"},
        "timeout": {"type": "integer"},
    }
    assert function["parameters"]["required"] == ["cmd"]


def test_a_known_harness_with_an_unlisted_tool_is_marked_harness_plus_inferred() -> None:
    calls = [ToolCall("a", "Bash", '{"command": "ls"}'), ToolCall("b", "mcp__gh__issue", "{}")]
    found = resolve_tools(_traj("claude-code", calls))
    assert found.source == "harness+inferred" and found.tools is not None
    assert tool_name(found.tools[-1]) == "mcp__gh__issue"


def test_recorded_schemas_win_and_trajectories_without_calls_get_none() -> None:
    recorded = json.dumps([{"type": "function", "function": {"name": "Bash", "parameters": {}}}])
    found = resolve_tools(_traj("claude-code", [ToolCall("a", "Bash", "{}")], recorded))
    assert found.source == "recorded" and found.tools is not None and len(found.tools) == 1
    assert resolve_tools(_traj("claude-code", [])) == resolve_tools(_traj("nobody", []))
    assert resolve_tools(_traj("nobody", [])).tools is None


def test_old_swe_agent_bundle_names_map_to_the_renamed_bundles() -> None:
    old = harness_tools("swe-agent", ["defaults", "edit_replace"])
    new = harness_tools("swe-agent", ["windowed", "windowed_edit_replace"])
    assert old == new and old
    assert harness_tools("no-such-harness") is None


def test_the_anthropic_body_of_a_claude_code_step_defines_every_tool_it_uses() -> None:
    [traj] = _load(CLAUDE)
    adapter = detect(Source(CLAUDE))
    step = next(s for s in build_steps(traj, adapter, EligibilityRules(min_tokens=0)) if s.eligible)
    request = ChatRequest(tuple(agent_context(traj, step, adapter)), tools=tools_of(traj))
    body = build_request("claude-x", request)
    defined = {t["name"] for t in body["tools"]}
    used = {
        b["name"] for m in body["messages"] for b in m["content"] if b.get("type") == "tool_use"
    }
    assert used and used <= defined
    assert all("input_schema" in t for t in body["tools"])
