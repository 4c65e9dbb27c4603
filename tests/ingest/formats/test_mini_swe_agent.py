"""mini-swe-agent adapter on the real sample runs, plus v2 / bad shapes built in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats.mini_swe_agent import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import Message, ToolCall, TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, observation_count

DJANGO = SAMPLES / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"
GITHUB = SAMPLES / "mini-swe-agent" / "github_issue.traj.json"


def load_one(path: Path) -> TrajectoryRecord:
    [record] = list(ADAPTER.load(Source(path)))
    assert isinstance(record, TrajectoryRecord)
    return record


# Expected numbers counted with jq, independently of the adapter:
#   messages:  jq '.messages|length'  (bare list: jq 'length')
#   one action: jq '[.messages[]|select(.role=="assistant")|.content
#               |[scan("```bash\\s*\\n")]|length|select(.==1)]|length'  (mswea_bash_command for
#               github_issue)
#   observations: jq '[.messages as $m|range(0;$m|length)|select($m[.].role=="assistant"
#               and ($m[.+1].role // "")=="user")]|length'
@pytest.mark.parametrize(
    ("path", "n_messages", "n_one_action", "n_observations"),
    [(DJANGO, 36, 17, 17), (GITHUB, 22, 10, 10)],
)
def test_sample_counts(path: Path, n_messages: int, n_one_action: int, n_observations: int) -> None:
    record = load_one(path)
    assert len(record.messages) == n_messages
    one = [
        m for m in record.messages if m.role == "assistant" and len(ADAPTER.parse_action(m)) == 1
    ]
    assert len(one) == n_one_action
    assert observation_count(record.messages) == n_observations


@pytest.mark.parametrize("path", [DJANGO, GITHUB])
def test_canonical_messages_equal_the_source(path: Path) -> None:
    doc = json.loads(path.read_text())
    source_messages = doc["messages"] if isinstance(doc, dict) else doc
    record = load_one(path)
    assert [(m.role, m.content) for m in record.messages] == [
        (m["role"], m["content"]) for m in source_messages
    ]


def test_v1_metadata_comes_from_info_and_the_sibling_report() -> None:
    record = load_one(DJANGO)
    assert record.native_id == "django__django-16255"
    assert record.harness == "mini-swe-agent"
    assert record.harness_version == "1.15.0"
    assert record.agent_model == "google/gemini-3-pro-preview"
    assert record.exit_status == "Submitted"
    assert record.cost_usd == pytest.approx(0.0893484)
    assert record.api_calls == 17
    assert record.resolved is True  # report.json beside the file
    assert record.task is not None and record.system_prompt is not None
    assert record.task.startswith("Sitemaps without items raise ValueError on callable lastmod.")
    assert "<pr_description>" not in record.task and "</pr_description>" not in record.task
    assert record.system_prompt.startswith("You are a helpful assistant")
    assert json.loads(record.metadata)["submission"].startswith("diff --git")
    assert record.record_index == 0


def test_bare_list_without_report_has_unknown_resolution() -> None:
    record = load_one(GITHUB)
    assert record.native_id == "github_issue"
    assert record.resolved is None
    assert record.task is not None
    assert record.task.startswith("Please solve this issue: GitHub Issue: SyntaxError")


def test_actions_of_the_sample_are_the_fenced_commands() -> None:
    record = load_one(DJANGO)
    first = ADAPTER.parse_action(record.messages[2])
    assert [a.command for a in first] == ["ls -R django/contrib/sitemaps"]
    last = ADAPTER.parse_action(record.messages[34])
    assert (
        last[0].command
        == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
    )


def test_split_observation_keeps_the_envelope_out_of_the_payload() -> None:
    record = load_one(DJANGO)
    obs = record.messages[9]
    prefix, payload, suffix = ADAPTER.split_observation(obs)
    assert prefix == "<returncode>0</returncode>\n<output>\n"
    assert suffix == "</output>"
    assert payload.startswith("Attempting to get latest lastmod...")
    for m in record.messages:
        if m.role == "user":
            assert "".join(ADAPTER.split_observation(m)) == m.content
    # The final submission message has no envelope: all payload.
    assert ADAPTER.split_observation(record.messages[-1]) == ("", record.messages[-1].content, "")


def test_split_observation_of_a_truncated_output() -> None:
    content = (
        "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n"
        "</warning><output_head>\nline 1\n</output_head>\n<elided_chars>\n12 characters elided\n"
        "</elided_chars>\n<output_tail>\nline 99\n</output_tail>"
    )
    prefix, payload, suffix = ADAPTER.split_observation(Message(role="user", content=content))
    assert prefix.endswith("<output_head>\n") and prefix.startswith("<returncode>0")
    assert payload.startswith("line 1\n</output_head>") and payload.endswith("line 99\n")
    assert suffix == "</output_tail>"
    assert prefix + payload + suffix == content


def test_split_observation_of_a_v2_exit_code_trailer() -> None:
    content = "total 0\nfile.py\n[exit code 0]"
    parts = ADAPTER.split_observation(Message(role="tool", content=content))
    assert parts == ("", "total 0\nfile.py\n", "[exit code 0]")


def write_v2(tmp_path: Path) -> Path:
    doc = {
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "repo__x-1",
        "info": {
            "mini_version": "2.0.0",
            "exit_status": "Submitted",
            "model_stats": {"instance_cost": 0.5, "api_calls": 2},
            "config": {"model": {"model_name": "anthropic/claude-sonnet-4-5"}},
        },
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Please solve this issue: fix x"},
            {
                "role": "assistant",
                "content": "Two reads.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "cat a"}'},
                    },
                ],
                "extra": {
                    "actions": [{"command": "ls"}, {"command": "cat a"}],
                    "response": {"usage": {"prompt_tokens": 100, "completion_tokens": 7}},
                },
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a\n[exit code 0]"},
            {"role": "tool", "tool_call_id": "c2", "content": "x = 1\n[exit code 0]"},
            {
                "role": "exit",
                "content": "diff",
                "extra": {"exit_status": "Submitted", "submission": "diff"},
            },
        ],
    }
    path = tmp_path / "repo__x-1.traj.json"
    path.write_text(json.dumps(doc))
    (tmp_path / "report.json").write_text(json.dumps({"repo__x-1": {"resolved": False}}))
    return path


def test_v2_tool_calls_and_exit_message(tmp_path: Path) -> None:
    path = write_v2(tmp_path)
    assert ADAPTER.detect(Source(path))
    record = load_one(path)
    assert [m.role for m in record.messages] == ["system", "user", "assistant", "tool", "tool"]
    assistant = record.messages[2]
    assert assistant.tool_calls == [
        ToolCall(id="c1", name="bash", arguments='{"command": "ls"}'),
        ToolCall(id="c2", name="bash", arguments='{"command": "cat a"}'),
    ]
    assert [a.command for a in ADAPTER.parse_action(assistant)] == ["ls", "cat a"]
    assert record.messages[3].tool_call_id == "c1"
    assert observation_count(record.messages) == 2
    assert record.exit_status == "Submitted"
    assert json.loads(record.metadata)["exit"] == {"exit_status": "Submitted", "submission": "diff"}
    assert record.resolved is False
    assert (record.prompt_tokens, record.completion_tokens) == (100, 7)
    assert record.harness_version == "2.0.0"


def test_wrong_shape_is_quarantined_with_file_index_and_cause(tmp_path: Path) -> None:
    path = tmp_path / "bad.traj.json"
    path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "messages": [{"x": 1}]}))
    [row] = list(ADAPTER.load(Source(path)))
    assert isinstance(row, QuarantineRecord)
    assert row.error_kind == "wrong_shape"
    assert row.record_index == 0
    assert str(path) in row.message and "message 0" in row.message and "'role'" in row.message


def test_detects_its_samples_and_no_other_format() -> None:
    assert ADAPTER.detect(Source(DJANGO))
    assert ADAPTER.detect(Source(GITHUB))
    others = [
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and "mini-swe-agent" not in p.parts and p.suffix != ".md"
    ]
    assert len(others) >= 9
    assert [p for p in others if ADAPTER.detect(Source(p))] == []
    assert not ADAPTER.detect(Source(DJANGO.parent / "report.json"))
