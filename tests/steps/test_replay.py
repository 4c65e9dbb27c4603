"""Replay rebuilds the logged context exactly, and swaps only the observation payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.source import Source
from builder.steps.pairing import EligibilityRules, build_steps
from builder.steps.replay import agent_context, tools_of
from schemas.trajectories import TrajectoryRecord
from tests.paths import SAMPLES, SHARED

EXACT_FILES = [
    SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json",
    SHARED / "mini-swe-agent/github_issue.traj.json",
    SHARED / "swe-smith-messages/ft_xml_example.jsonl",
    SHARED
    / "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json",
    SHARED / "swe-agent/marshmallow-code__marshmallow-1867.traj",
    SAMPLES / "chat-messages/textstats.jsonl",
]


def _trajectories(path: Path) -> list[tuple[TrajectoryRecord, object]]:
    source = Source(path)
    adapter = detect(source)
    return [(t, adapter) for t in adapter.load(source) if isinstance(t, TrajectoryRecord)]


@pytest.mark.parametrize("path", EXACT_FILES, ids=lambda p: p.name)
def test_raw_replay_equals_the_logged_context_for_exact_formats(path: Path) -> None:
    checked = 0
    for traj, adapter in _trajectories(path):
        assert traj.fidelity == "exact"
        for step in build_steps(traj, adapter, EligibilityRules(min_tokens=0)):
            context = agent_context(traj, step, adapter)
            next_turn = next(
                i
                for i in range(step.observation_message_index + 1, len(traj.messages) + 1)
                if i == len(traj.messages) or traj.messages[i].role == "assistant"
            )
            assert context == traj.messages[:next_turn]
            checked += 1
    assert checked > 0


def test_mini_swe_agent_envelope_stays_and_only_the_payload_changes() -> None:
    path = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
    [(traj, adapter)] = _trajectories(path)
    step = next(s for s in build_steps(traj, adapter, EligibilityRules()) if s.eligible)
    raw = traj.messages[step.observation_message_index].content
    context = agent_context(traj, step, adapter, rendered="SHORT")
    replaced = context[step.observation_message_index]
    assert replaced.role == "user"
    assert replaced.content.startswith("<returncode>") and "<output>" in replaced.content
    assert replaced.content.endswith("</output>")
    assert "SHORT" in replaced.content and step.observation not in replaced.content
    assert raw.replace(step.observation, "SHORT") == replaced.content
    assert (
        context[: step.observation_message_index] == traj.messages[: step.observation_message_index]
    )


def test_tool_call_formats_keep_the_tool_call_id_and_send_the_tools() -> None:
    path = (
        SHARED
        / "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json"
    )
    [(traj, adapter)] = _trajectories(path)
    step = next(s for s in build_steps(traj, adapter, EligibilityRules(min_tokens=0)))
    original = traj.messages[step.observation_message_index]
    replaced = agent_context(traj, step, adapter, rendered="SHORT")[step.observation_message_index]
    assert replaced.role == "tool" and replaced.tool_call_id == original.tool_call_id
    assert replaced.content == "SHORT"
    tools = tools_of(traj)
    assert tools and all("function" in t or "name" in t for t in tools)
    assert json.loads(traj.tools or "[]") == list(tools)


# ---------------------------------------------------------------- against the raw files


def _text(content: object) -> str:
    """Message content as read with json: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _raw_mini(path: Path) -> list[list[dict]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [data["messages"] if isinstance(data, dict) else data]


def _raw_jsonl(path: Path) -> list[list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["messages"] for line in lines if line.strip()]


def _raw_llm_log(path: Path) -> list[list[dict]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [[*data["messages"], data["response"]["choices"][0]["message"]]]


RAW_READERS = [
    (SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json", _raw_mini),
    (SHARED / "mini-swe-agent/github_issue.traj.json", _raw_mini),
    (SHARED / "swe-smith-messages/ft_xml_example.jsonl", _raw_jsonl),
    (EXACT_FILES[3], _raw_llm_log),  # the OpenHands LLM completion log
]


def _raw_view(message: dict) -> tuple:
    calls = tuple(
        (c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
        for c in message.get("tool_calls") or []
    )
    return (message["role"], _text(message.get("content")), message.get("tool_call_id"), calls)


def _replayed_view(message: object) -> tuple:
    calls = tuple((c.name, json.loads(c.arguments or "{}")) for c in message.tool_calls)  # type: ignore[attr-defined]
    return (message.role, message.content, message.tool_call_id, calls)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("path", "read_raw"), RAW_READERS, ids=lambda v: getattr(v, "name", ""))
def test_raw_replay_equals_the_messages_read_straight_from_the_file(path: Path, read_raw) -> None:
    """Every step's replayed context is the raw file's message list up to the next assistant
    turn: roles, texts, tool-call ids and tool calls, read with `json`, not with the adapter."""
    raw_trajectories = read_raw(path)
    loaded = _trajectories(path)
    assert len(loaded) == len(raw_trajectories)
    checked = 0
    for (traj, adapter), raw in zip(loaded, raw_trajectories, strict=True):
        for step in build_steps(traj, adapter, EligibilityRules(min_tokens=0)):
            context = agent_context(traj, step, adapter)
            end = len(context)
            assert end > step.observation_message_index
            assert end == len(raw) or raw[end]["role"] == "assistant"
            assert [_replayed_view(m) for m in context] == [_raw_view(m) for m in raw[:end]]
            checked += 1
    assert checked >= len(raw_trajectories)


# ---------------------------------------------------------------- substitution on the wire


def test_the_agent_request_carries_the_candidate_not_the_raw_list_form_observation() -> None:
    """The OpenHands LLM log keeps message content as lists (`content_parts`). Substituting
    the observation must drop them: otherwise the wire (OpenAI parts, Anthropic blocks)
    carries the raw observation and every candidate is judged as if it were raw."""
    from builder.llm.messages import to_anthropic, to_openai_messages
    from builder.nap.agent import agent_request
    from builder.nap.types import NapSettings, StepJob

    [(traj, adapter)] = _trajectories(EXACT_FILES[3])
    steps = [
        s
        for s in build_steps(traj, adapter, EligibilityRules(min_tokens=0))
        if traj.messages[s.observation_message_index].content_parts and len(s.observation) > 40
    ]
    assert steps, "the sample must hold list-form observations"
    candidate = "CANDIDATE: (compressed 12 lines: the listing)"
    for step in steps:
        job = StepJob(traj, step, adapter)  # type: ignore[arg-type]
        request = agent_request(
            job, candidate, n=1, temperature=0.0, seed=0, settings=NapSettings()
        )
        openai = json.dumps(to_openai_messages(request.messages))
        _, anthropic_turns = to_anthropic(request.messages)
        anthropic = json.dumps(anthropic_turns)
        for wire in (openai, anthropic):
            assert candidate in wire
            assert json.dumps(step.observation)[1:-1] not in wire
        raw = agent_request(job, None, n=1, temperature=0.0, seed=0, settings=NapSettings())
        assert json.dumps(step.observation)[1:-1] in json.dumps(to_openai_messages(raw.messages))
