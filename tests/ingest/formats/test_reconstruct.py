"""Chat reconstruction helpers shared by the event-log adapters."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.reconstruct import Transcript, arguments_text, split_openhands_trailer
from builder.ingest.formats.source import Source
from schemas.common import from_row, to_table
from schemas.trajectories import TRAJECTORY_SCHEMA, Message, ToolCall, TrajectoryRecord
from tests.ingest.formats.common import SAMPLES


def tool(call_id: str, text: str) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id)


def test_trailer_lines_are_split_off_and_nothing_is_lost() -> None:
    text = "ok\n[The command completed with exit code 0.]\n[Current working directory: /w]"
    prefix, payload, suffix = split_openhands_trailer(text)
    assert (prefix, payload) == ("", "ok")
    assert prefix + payload + suffix == text
    assert split_openhands_trailer("[1] item\nlast") == ("", "[1] item\nlast", "")


def test_logged_argument_text_is_kept_verbatim() -> None:
    assert arguments_text('{"b": 1, "a": 2}') == '{"b": 1, "a": 2}'
    assert arguments_text({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert arguments_text("not json") == '{"_raw":"not json"}'


def test_late_result_joins_its_turn_and_early_result_waits_for_its_call() -> None:
    transcript = Transcript()
    transcript.add_assistant("", [ToolCall("a", "bash", "{}")])
    transcript.add(Message(role="user", content="interjection"))
    assert transcript.add_result(tool("a", "A"))  # placed before the user message
    assert transcript.add_result(tool("b", "B"), defer=True)  # its call comes later
    assert not transcript.add_result(tool("zzz", "?"))
    transcript.add_assistant("", [ToolCall("b", "Read", "{}")])
    assert transcript.add_result(tool("c", "C"), defer=True)  # never called
    messages, orphans = transcript.finish()
    assert [(m.role, m.content) for m in messages] == [
        ("assistant", ""), ("tool", "A"), ("user", "interjection"),
        ("assistant", ""), ("tool", "B"), ("user", "C"),
    ]  # fmt: skip
    assert messages[4].name == "Read"
    assert orphans == 1


EVENT_SAMPLES = [
    "openhands-v0/basic.json",
    "openhands-v0/resolver/output.jsonl",
    "openhands-v1-sdk/events.jsonl",
    "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json",
    "claude-code/hello-world-script/transcript.jsonl",
    "atif-variant/trajectory.json",
]


@pytest.mark.parametrize("name", EVENT_SAMPLES)
def test_records_round_trip_through_parquet(name: str, tmp_path: Path) -> None:
    source = Source(SAMPLES / name)
    records = list(detect(source).load(source))
    assert records and all(isinstance(r, TrajectoryRecord) for r in records)
    path = tmp_path / "trajectories.parquet"
    pq.write_table(to_table(records, TRAJECTORY_SCHEMA), path)
    back = [from_row(TrajectoryRecord, row) for row in pq.read_table(path).to_pylist()]
    assert back == records
