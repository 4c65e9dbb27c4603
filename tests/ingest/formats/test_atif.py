"""ATIF adapter: the real variant file (results as system steps) and the standard shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.atif import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, assert_paired, sample_files

VARIANT = SAMPLES / "atif-variant" / "trajectory.json"


def load(path: Path) -> TrajectoryRecord:
    (record,) = list(ADAPTER.load(Source(path)))
    assert isinstance(record, TrajectoryRecord), record
    return record


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_detects_only_atif(path: Path) -> None:
    assert ADAPTER.detect(Source(path)) is (path.resolve() == VARIANT.resolve())


def test_registry_picks_this_adapter() -> None:
    assert detect(Source(VARIANT)).name == "atif"


def test_variant_counts() -> None:
    # jq -c '.steps[]|[.step_id,.source,(.tool_calls//[]|length),
    #   ([.tool_calls//[]|.[]|select(.name=="Bash")]|length),(.observation.type // "")]'
    #   -> 1 user step, 3 agent steps (0, 4 and 1 calls; 3 Bash), 5 system tool_result steps.
    #   Every step is one message: 9 messages, 5 tool calls, 5 tool messages, 3 shell actions.
    record = load(VARIANT)
    msgs = record.messages
    assert len(msgs) == 9
    assert sum(len(m.tool_calls) for m in msgs) == 5
    assert sum(m.role == "tool" for m in msgs) == 5
    actions = [a for m in msgs for a in ADAPTER.parse_action(m)]
    assert sum(a.command is not None for a in actions) == 3
    assert_paired(msgs)


def test_variant_results_follow_their_calls() -> None:
    # the file logs steps 3-6 (results) before step 7 (their calls) and step 8 before step 9
    msgs = load(VARIANT).messages
    roles = [m.role for m in msgs]
    assert roles == [
        "user",
        "assistant",
        "assistant",
        "tool",
        "tool",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]
    calls = msgs[2].tool_calls
    assert [m.tool_call_id for m in msgs[3:7]] == [c.id for c in calls]
    sudo = next(
        a for a in ADAPTER.parse_action(msgs[2]) if a.command and a.command.startswith("sudo")
    )
    assert sudo.command == "sudo mkdir -p /app && sudo chmod 777 /app"
    assert msgs[5].content.startswith("Exit code 1\nsudo: a terminal is required")
    assert msgs[3].content == "EACCES: permission denied, mkdir '/app'"
    assert msgs[8].tool_call_id == "toolu_0186rmktgkZUgbWnnJXs8WB2"


def test_variant_run_fields() -> None:
    record = load(VARIANT)
    assert record.agent_model == "claude-sonnet-4-20250514"
    assert (record.harness, record.harness_version) == ("claude-code", "2.0.58")
    assert record.native_id == "tbench-1765491470070-3679a2f1"
    assert record.task is not None and record.task.startswith("Write a regex expression")
    assert record.cost_usd == pytest.approx(0.1268215)
    assert (record.prompt_tokens, record.completion_tokens) == (70, 15013)


STANDARD = {
    "schema_version": "ATIF-v1.4",
    "session_id": "abc",
    "agent": {"name": "harbor-agent", "version": "1.0.0", "model_name": "m1"},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You are an agent."},
        {"step_id": 2, "source": "user", "message": "List files."},
        {
            "step_id": 3, "source": "agent", "message": "Listing.", "reasoning_content": "r",
            "tool_calls": [
                {"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}},
                {"tool_call_id": "c2", "function_name": "bash", "arguments": {"command": "pwd"}},
            ],
            "observation": {"results": [
                {"source_call_id": "c2", "content": "/w"},
                {"source_call_id": "c1", "content": "a.py"},
            ]},
        },
        {
            "step_id": 4, "source": "agent", "message": "echo hi",
            "observation": {"results": [{"content": "hi"}]},
        },
        {"step_id": 5, "source": "agent", "message": "Done."},
    ],
    "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 5},
}  # fmt: skip


def test_standard_shape(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(STANDARD))
    assert ADAPTER.detect(Source(path))
    record = load(path)
    msgs = record.messages
    assert [m.role for m in msgs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert_paired(msgs)
    assert {m.tool_call_id: m.content for m in msgs[3:5]} == {"c1": "a.py", "c2": "/w"}
    assert msgs[6].content == "hi"  # a result without a call observes a non-tool action
    assert record.system_prompt == "You are an agent."
    assert record.task == "List files."
    assert record.agent_model == "m1"
    assert [a.command for a in ADAPTER.parse_action(msgs[2])] == ["ls", "pwd"]


def test_broken_files_are_quarantined(tmp_path: Path) -> None:
    bad_step = json.loads(json.dumps(STANDARD))
    bad_step["steps"][2]["tool_calls"] = "ls"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad_step))
    (result,) = list(ADAPTER.load(Source(path)))
    assert isinstance(result, QuarantineRecord) and result.error_kind == "wrong_shape"
    assert "step 2" in result.message and str(path) in result.message
    empty = tmp_path / "empty.json"
    empty.write_text("")
    (result,) = list(ADAPTER.load(Source(empty)))
    assert isinstance(result, QuarantineRecord) and result.error_kind == "empty"


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_forcing_this_format_on_other_samples_only_quarantines(path: Path) -> None:
    if path.resolve() == VARIANT.resolve():
        pytest.skip("a sample of this format")
    results = list(ADAPTER.load(Source(path)))
    assert results
    assert all(isinstance(r, QuarantineRecord) for r in results)


def test_one_terminal_screen_for_several_keystroke_calls(tmp_path: Path) -> None:
    # Terminus writes one result without `source_call_id` for all keystrokes of a turn
    keys = [
        {
            "tool_call_id": f"call_1_{i}",
            "function_name": "bash_command",
            "arguments": {"keystrokes": k},
        }
        for i, k in enumerate(["cd /app\n", "ls -la\n"], start=1)
    ]
    document = {
        "schema_version": "ATIF-v1.2",
        "session_id": "t",
        "agent": {"name": "terminus-2", "version": "2.0.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Look around."},
            {
                "step_id": 2, "source": "agent", "message": "{...}", "tool_calls": keys,
                "observation": {"results": [{"content": "$ ls -la\nfile.txt"}]},
            },
        ],
    }  # fmt: skip
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(document))
    msgs = load(path).messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[2].tool_call_id == "call_1_2"
    assert msgs[2].content == "$ ls -la\nfile.txt"
    assert [a.command for a in ADAPTER.parse_action(msgs[1])] == ["cd /app", "ls -la"]


def test_results_logged_before_their_call_get_the_tool_name() -> None:
    msgs = load(VARIANT).messages
    assert [m.name for m in msgs if m.role == "tool"] == ["Write", "Bash", "Bash", "Bash", "Write"]
