"""chat-messages JSONL adapter on the real SWE-smith sample and on handcrafted lines."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from builder.ingest.formats.base import LoadResult
from builder.ingest.formats.chat_messages import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import Message, ToolCall, TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, observation_count

SWE_SMITH = SAMPLES / "swe-smith-messages" / "ft_xml_example.jsonl"


def trajectories(rows: Iterable[LoadResult]) -> list[TrajectoryRecord]:
    """The rows, all of which must be trajectories (not quarantined)."""
    rows = list(rows)
    assert all(isinstance(r, TrajectoryRecord) for r in rows), rows
    return [r for r in rows if isinstance(r, TrajectoryRecord)]


def quarantined(rows: list[LoadResult]) -> list[QuarantineRecord]:
    return [r for r in rows if isinstance(r, QuarantineRecord)]


def test_sample_counts() -> None:
    # Counted with jq, independently of the adapter (-s over the 3 lines; `wc -l` = 3):
    #   messages:     jq -s '[.[]|.messages|length]'                       -> [75, 89, 45]
    #   one action:   jq -s '[.[]|[.messages[]|select(.role=="assistant")|.content
    #                 |[scan("<function=[^>]+>")]|length|select(.==1)]|length]' -> [37, 44, 22]
    #   observations: jq -s '[.[]|[.messages as $m|range(0;$m|length)|select($m[.].role==
    #                 "assistant" and ($m[.+1].role // "")=="user")]|length]' -> [36, 43, 21]
    records = trajectories(ADAPTER.load(Source(SWE_SMITH)))
    assert all(isinstance(r, TrajectoryRecord) for r in records)
    assert len(records) == 3
    assert [len(r.messages) for r in records] == [75, 89, 45]
    assert [
        sum(m.role == "assistant" and len(ADAPTER.parse_action(m)) == 1 for m in r.messages)
        for r in records
    ] == [37, 44, 22]
    assert [observation_count(r.messages) for r in records] == [36, 43, 21]
    assert [r.record_index for r in records] == [0, 1, 2]


def test_canonical_messages_equal_the_source_lines() -> None:
    lines = [json.loads(line) for line in SWE_SMITH.read_text().splitlines() if line.strip()]
    records = trajectories(ADAPTER.load(Source(SWE_SMITH)))
    for line, record in zip(lines, records, strict=True):
        assert [(m.role, m.content) for m in record.messages] == [
            (m["role"], m["content"]) for m in line["messages"]
        ]
        assert record.native_id == line["instance_id"]


def test_sample_metadata_task_and_ids() -> None:
    first, second, _ = trajectories(ADAPTER.load(Source(SWE_SMITH)))
    assert first.task is not None and first.system_prompt is not None
    assert first.task.startswith("BUG: [pyarrow] AttributeError: 'Index' object has no attribute")
    assert first.system_prompt.startswith("You are a helpful assistant")
    assert first.trajectory_id != second.trajectory_id
    assert first.trajectory_id == trajectories(ADAPTER.load(Source(SWE_SMITH)))[0].trajectory_id


def test_sample_actions_and_observations() -> None:
    first = trajectories(ADAPTER.load(Source(SWE_SMITH)))[0]
    [action] = ADAPTER.parse_action(first.messages[2])
    assert action.tool == "bash" and action.command is not None
    assert action.command.startswith('find /testbed -type f -name "*.py"')
    prefix, payload, suffix = ADAPTER.split_observation(first.messages[3])
    assert (prefix, suffix) == ("OBSERVATION:\n", "")
    assert payload.startswith("/testbed/scripts/pandas_errors_documented.py")
    for record in trajectories(ADAPTER.load(Source(SWE_SMITH))):
        for m in record.messages:
            if m.role == "user":
                assert "".join(ADAPTER.split_observation(m)) == m.content


def test_observation_marker_variants() -> None:
    def split(text: str) -> tuple[str, str, str]:
        return ADAPTER.split_observation(Message(role="user", content=text))

    assert split("Observation: /testbed/a.py") == ("Observation: ", "/testbed/a.py", "")
    assert split("OBSERVATION:\r\nx") == ("OBSERVATION:\r\n", "x", "")
    assert split("Your command ran successfully.") == ("", "Your command ran successfully.", "")


def test_openai_tool_calls_and_tool_messages(tmp_path: Path) -> None:
    row = {
        "instance_id": "a__b-1",
        "model": "qwen",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
                    },
                    {
                        "id": "t2",
                        "type": "function",
                        "function": {"name": "str_replace_editor", "arguments": "{not json"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "a.py"},
            {"role": "tool", "tool_call_id": "t2", "content": "error"},
            {"role": "assistant", "content": "done"},
        ],
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert ADAPTER.detect(Source(path))
    [record] = trajectories(ADAPTER.load(Source(path)))
    assistant = record.messages[2]
    assert assistant.content == ""
    assert assistant.tool_calls[0] == ToolCall(
        id="t1", name="execute_bash", arguments='{"command": "ls"}'
    )
    ls, bad = ADAPTER.parse_action(assistant)
    assert (ls.tool, ls.command) == ("execute_bash", "ls")
    assert bad.tool == "str_replace_editor"
    assert json.loads(bad.arguments) == {"_raw": "{not json"}  # kept, not dropped
    assert record.messages[4].tool_call_id == "t2"
    assert observation_count(record.messages) == 2
    assert json.loads(record.metadata) == {"model": "qwen"}


def test_a_bad_line_is_quarantined_and_the_others_go_on(tmp_path: Path) -> None:
    good = {"instance_id": "x", "messages": [{"role": "user", "content": "hi"}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({"instance_id": "y", "messages": 7}),
                json.dumps({"instance_id": "z"}),
                json.dumps({"messages": [{"role": "user", "content": 5}]}),
                json.dumps(good | {"instance_id": "w"}),
            ]
        )
        + "\n"
    )
    rows = list(ADAPTER.load(Source(path)))
    assert [type(r).__name__ for r in rows] == [
        "TrajectoryRecord",
        "QuarantineRecord",
        "QuarantineRecord",
        "QuarantineRecord",
        "QuarantineRecord",
        "TrajectoryRecord",
    ]
    bad = quarantined(rows)
    assert [r.record_index for r in bad] == [1, 2, 3, 4]
    assert [r.error_kind for r in bad] == [
        "invalid_json",
        "wrong_shape",
        "wrong_shape",
        "wrong_shape",
    ]
    assert all(str(path) in r.message for r in bad)
    assert "record 2" in bad[1].message and "expected a list" in bad[1].message
    assert "'messages'" in bad[2].message
    assert "message 0" in bad[3].message and "'content'" in bad[3].message
    assert [r.record_index for r in rows if isinstance(r, TrajectoryRecord)] == [0, 5]


@pytest.mark.parametrize(
    "relative",
    [
        "openhands-v1-sdk/events.jsonl",
        "claude-code/hello-world-script/transcript.jsonl",
        "openhands-v0/resolver/output.jsonl",
        "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json",
        "openhands-v0/basic.json",
        "atif-variant/trajectory.json",
        "mini-swe-agent/github_issue.traj.json",
        "swe-agent/pydicom__pydicom-1458.traj",
    ],
)
def test_does_not_claim_other_formats(relative: str) -> None:
    assert not ADAPTER.detect(Source(SAMPLES / relative))


def test_detects_the_sample() -> None:
    assert ADAPTER.detect(Source(SWE_SMITH))


def test_tools_beside_messages_are_kept_and_bad_tools_are_quarantined(tmp_path: Path) -> None:
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    messages = [{"role": "user", "content": "hi"}]
    path = tmp_path / "tools.jsonl"
    rows_in = [
        {"instance_id": "a", "messages": messages, "tools": [tool]},
        {"instance_id": "b", "messages": messages, "tools": json.dumps([tool])},
        {"instance_id": "c", "messages": messages, "tools": {"name": "bash"}},
        {"instance_id": "d", "messages": messages},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_in))
    rows = list(ADAPTER.load(Source(path)))
    kinds = [type(r).__name__ for r in rows]
    assert kinds == ["TrajectoryRecord", "TrajectoryRecord", "QuarantineRecord", "TrajectoryRecord"]
    first, second, _, last = rows
    assert isinstance(first, TrajectoryRecord) and isinstance(second, TrajectoryRecord)
    assert first.tools is not None and json.loads(first.tools) == [tool]
    assert second.tools == first.tools
    assert isinstance(last, TrajectoryRecord) and last.tools is None
    [bad] = quarantined(rows)
    assert "record 2" in bad.message and "'tools'" in bad.message


def test_the_project_sample_declares_its_bash_tool() -> None:
    sample = Path(__file__).resolve().parents[3] / "builder/samples/chat-messages/textstats.jsonl"
    raw = json.loads(sample.read_text().splitlines()[0])
    [record] = trajectories(ADAPTER.load(Source(sample)))
    assert record.tools is not None and json.loads(record.tools) == raw["tools"]
