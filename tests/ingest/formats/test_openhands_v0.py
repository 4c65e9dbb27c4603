"""OpenHands v0 adapter on the real event list and resolver output, plus broken inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.openhands_v0 import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, assert_paired, sample_files

BASIC = SAMPLES / "openhands-v0" / "basic.json"
RESOLVER = SAMPLES / "openhands-v0" / "resolver" / "output.jsonl"
OWN = {BASIC.resolve(), RESOLVER.resolve()}


def trajectories(path: Path) -> list[TrajectoryRecord]:
    records = list(ADAPTER.load(Source(path)))
    assert all(isinstance(r, TrajectoryRecord) for r in records), records
    return records  # type: ignore[return-value]


def counts(record: TrajectoryRecord) -> tuple[int, int, int, int]:
    """(messages, tool calls, tool messages, shell actions)."""
    msgs = record.messages
    shell = sum(1 for m in msgs for a in ADAPTER.parse_action(m) if a.command is not None)
    return (
        len(msgs),
        sum(len(m.tool_calls) for m in msgs),
        sum(m.role == "tool" for m in msgs),
        shell,
    )


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_detects_only_openhands_v0_samples(path: Path) -> None:
    assert ADAPTER.detect(Source(path)) is (path.resolve() in OWN)


def test_registry_picks_this_adapter_for_its_samples() -> None:
    assert detect(Source(BASIC)).name == "openhands-v0"
    assert detect(Source(RESOLVER)).name == "openhands-v0"


def test_basic_event_list_counts_and_real_tool_calls() -> None:
    # jq -c '[([.[]|select(.action=="message")]|length), ([.[]|select(.action and
    #   .action!="message")]|length), ([.[]|select(.observation)]|length)]' basic.json
    #   -> [1, 2, 1]: 1 user message + 2 tool-call actions + 1 observation = 4 messages;
    #   jq '[.[]|select(.action=="run")]|length' -> 0 shell actions.
    (record,) = trajectories(BASIC)
    assert counts(record) == (4, 2, 1, 0)
    assert [m.role for m in record.messages] == ["user", "assistant", "tool", "assistant"]
    assert_paired(record.messages)
    edit = record.messages[1]
    # the real call from tool_call_metadata.model_response, not the lossy `args`
    assert edit.tool_calls[0].id == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    assert edit.tool_calls[0].name == "str_replace_editor"
    assert json.loads(edit.tool_calls[0].arguments)["command"] == "create"
    assert edit.content.startswith("I'll help you create a simple 2048 game")
    # the editor's own output, not the UI diff
    assert record.messages[2].content == "File created successfully at: /workspace/game_2048.py"
    assert record.messages[3].tool_calls[0].name == "finish"
    assert record.task is not None and record.task.startswith("Please create a simple 2048 game")
    assert record.exit_status == "finished"
    assert record.fidelity == "reconstructed"


def test_resolver_flat_history_counts() -> None:
    # jq -c '[(.history|length), ([.history[]|select(.action=="message")]|length),
    #   ([.history[]|select(.action and .action!="message")]|length),
    #   ([.history[]|select(.observation)]|length), ([.history[]|select(.action=="run")]|length)]'
    #   -> [8,1,4,3,2] and [44,1,22,21,1]; every event is one message.
    records = trajectories(RESOLVER)
    assert len(records) == 2
    assert [counts(r) for r in records] == [(8, 4, 3, 2), (44, 22, 21, 1)]
    for record in records:
        assert_paired(record.messages)
        assert record.messages[0].role == "user"
    first = records[0]
    assert first.native_id == "neubig/pr-viewer#5"
    assert first.cost_usd == pytest.approx(0.070713)
    assert first.exit_status == "finished"


def test_resolver_commands_pair_with_their_output() -> None:
    first = trajectories(RESOLVER)[0]
    pairs = [
        (ADAPTER.parse_action(m)[0], first.messages[i + 1])
        for i, m in enumerate(first.messages)
        if m.tool_calls and i + 1 < len(first.messages) and first.messages[i + 1].role == "tool"
    ]
    commands = [(a.command, obs.content[:11]) for a, obs in pairs if a.command]
    assert commands == [("touch LICENSE", "\r\nroot@bcd3"), ("cat LICENSE", "MIT License")]
    action = ADAPTER.parse_action(first.messages[1])[0]
    assert action.tool == "execute_bash"
    assert first.messages[1].content.startswith("Certainly! I'll add the MIT license")


def test_observation_pairs_by_cause_not_position(tmp_path: Path) -> None:
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "do it"}},
        {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls", "thought": "a"}},
        {"id": 3, "source": "agent", "action": "run", "args": {"command": "pwd", "thought": "b"}},
        {"id": 4, "source": "agent", "observation": "run", "cause": 3, "content": "/work"},
        {"id": 5, "source": "agent", "observation": "run", "cause": 2, "content": "a.txt"},
    ]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events))
    (record,) = trajectories(path)
    assert_paired(record.messages)
    by_call = {m.tool_call_id: m.content for m in record.messages if m.role == "tool"}
    assert by_call == {"call_2": "a.txt", "call_3": "/work"}
    # the answer to `ls` sits in the block right after the `ls` turn
    assert [m.role for m in record.messages] == ["user", "assistant", "tool", "assistant", "tool"]


def test_bad_line_is_quarantined_and_the_rest_loads(tmp_path: Path) -> None:
    lines = RESOLVER.read_text().splitlines()
    broken = tmp_path / "output.jsonl"
    broken.write_text(
        "\n".join([lines[0], "{not json", '{"history": 5, "instruction": "x"}', lines[1]])
    )
    results = list(ADAPTER.load(Source(broken)))
    kinds = [type(r).__name__ for r in results]
    assert kinds == ["TrajectoryRecord", "QuarantineRecord", "QuarantineRecord", "TrajectoryRecord"]
    bad_json, bad_shape = results[1], results[2]
    assert isinstance(bad_json, QuarantineRecord) and bad_json.error_kind == "invalid_json"
    assert isinstance(bad_shape, QuarantineRecord) and bad_shape.error_kind == "wrong_shape"
    assert bad_shape.record_index == 2 and "record 2" in bad_shape.message
    assert str(broken) in bad_shape.message


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_forcing_this_format_on_other_samples_only_quarantines(path: Path) -> None:
    if path.resolve() in OWN:
        pytest.skip("a sample of this format")
    results = list(ADAPTER.load(Source(path)))
    assert results
    assert all(isinstance(r, QuarantineRecord) for r in results)


def test_oldest_output_with_action_observation_pairs(tmp_path: Path) -> None:
    history = [
        [
            {"id": 1, "source": "user", "action": "message", "args": {"content": "fix the bug"}},
            {"observation": "null", "content": "", "extras": {}},
        ],
        [
            {
                "id": 2,
                "source": "agent",
                "action": "run",
                "args": {"command": "ls", "thought": "t"},
            },
            {"id": 3, "observation": "run", "cause": 2, "content": "a.py", "extras": {}},
        ],
    ]
    line = {"instance_id": "x__y-1", "instruction": "fix the bug", "history": history}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert ADAPTER.detect(Source(path))
    (record,) = trajectories(path)
    assert [m.role for m in record.messages] == ["user", "assistant", "tool"]
    assert ADAPTER.parse_action(record.messages[1])[0].command == "ls"
    assert record.messages[2].content == "a.py"
    assert record.native_id == "x__y-1"


def test_conversation_export_wrapper_is_read(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"trajectory": json.loads(BASIC.read_text())}))
    assert ADAPTER.detect(Source(path))
    (record,) = trajectories(path)
    assert counts(record) == (4, 2, 1, 0)
