"""Claude Code session-transcript adapter on the real sample and on handcrafted sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.claude_code import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, assert_paired, sample_files

TRANSCRIPT = SAMPLES / "claude-code" / "hello-world-script" / "transcript.jsonl"


def trajectories(path: Path) -> list[TrajectoryRecord]:
    records = list(ADAPTER.load(Source(path)))
    assert all(isinstance(r, TrajectoryRecord) for r in records), records
    return records  # type: ignore[return-value]


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_detects_only_claude_code_transcripts(path: Path) -> None:
    assert ADAPTER.detect(Source(path)) is (path.resolve() == TRANSCRIPT.resolve())


def test_registry_picks_this_adapter() -> None:
    assert detect(Source(TRANSCRIPT)).name == "claude-code"


def test_sample_counts() -> None:
    # jq -c '[.type, .isSidechain, .message.id, (.message.content|type),
    #   ([.message.content|arrays|.[]|.type]|join(","))]' transcript.jsonl
    #   -> 1 queue-operation, 4 user (2 string, 2 tool_result), 4 assistant with 4 distinct
    #   message ids (2 tool_use: Write, Bash; 2 text); no sidechain.
    #   Messages: 2 user + 4 assistant + 2 tool = 8; tool calls 2; 1 shell action (Bash).
    (record,) = trajectories(TRANSCRIPT)
    msgs = record.messages
    assert len(msgs) == 8
    assert sum(len(m.tool_calls) for m in msgs) == 2
    assert sum(m.role == "tool" for m in msgs) == 2
    actions = [a for m in msgs for a in ADAPTER.parse_action(m)]
    assert [a.command for a in actions if a.command is not None] == [
        "chmod +x /tmp/tmp74wiyiny/hello.sh && /tmp/tmp74wiyiny/hello.sh"
    ]
    assert [m.role for m in msgs] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert_paired(msgs)


def test_sample_pairs_and_run_fields() -> None:
    (record,) = trajectories(TRANSCRIPT)
    msgs = record.messages
    assert msgs[1].tool_calls[0].name == "Write"
    assert msgs[2].content == "File created successfully at: /tmp/tmp74wiyiny/hello.sh"
    assert msgs[3].tool_calls[0].id == "toolu_01GNvoSEyj9jAsgFtJBduDPp"
    assert (msgs[4].tool_call_id, msgs[4].content, msgs[4].name) == (
        "toolu_01GNvoSEyj9jAsgFtJBduDPp", "Hello world", "Bash",
    )  # fmt: skip
    assert (
        record.task == 'Write a shell script called hello.sh that prints "Hello world" and run it.'
    )
    assert record.agent_model == "claude-opus-4-5-20251101"
    assert record.harness_version == "2.1.14"
    assert record.native_id == "de3b8b19-5bc0-4a2a-934a-1b6806567e25"
    assert record.api_calls == 4
    assert record.is_sidechain is False
    assert record.fidelity == "reconstructed"


def rec(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("mid")
        message["model"] = "claude-test"
    return {
        "type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": False,
        "sessionId": "s1", "message": message, **extra,
    }  # fmt: skip


def write(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_split_message_merges_and_thinking_stays_out(tmp_path: Path) -> None:
    use = {"type": "tool_use", "name": "Bash"}
    path = write(tmp_path, [
        {"type": "summary", "summary": "Earlier work", "leafUuid": "x"},
        rec("u1", None, "user", "fix it"),
        rec("a1", "u1", "assistant", [{"type": "thinking", "thinking": "hmm"}], mid="m1"),
        rec("a2", "a1", "assistant", [{"type": "text", "text": "Looking."}], mid="m1"),
        rec("a3", "a2", "assistant", [{**use, "id": "t1", "input": {"command": "ls"}}], mid="m1"),
        rec("a4", "a3", "assistant", [{**use, "id": "t2", "input": {"command": "pwd"}}], mid="m1"),
        rec("r2", "a4", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "/w"}]),
        rec("r1", "r2", "user", [{"type": "tool_result", "tool_use_id": "t1",
                                  "content": [{"type": "text", "text": "a.py"}]}]),
        "{oops",
        rec("a5", "r1", "assistant", [{"type": "text", "text": "Done."}], mid="m2"),
    ])  # fmt: skip
    results = list(ADAPTER.load(Source(path)))
    assert isinstance(results[0], QuarantineRecord) and results[0].record_index == 8
    (record,) = results[1:]
    assert isinstance(record, TrajectoryRecord)
    msgs = record.messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "tool", "assistant"]
    assert msgs[1].content == "Looking."  # thinking is not content
    assert [c.id for c in msgs[1].tool_calls] == ["t1", "t2"]
    assert {m.tool_call_id: m.content for m in msgs[2:4]} == {"t1": "a.py", "t2": "/w"}
    assert_paired(msgs)
    metadata = json.loads(record.metadata)
    assert metadata["part_counts"] == {"assistant_part:thinking": 1}
    assert metadata["summaries"] == ["Earlier work"]


def test_abandoned_branch_is_dropped_and_sidechain_is_separate(tmp_path: Path) -> None:
    side = rec("s1", None, "user", "sub task", isSidechain=True, agentId="ag1")
    side_reply = rec("s2", "s1", "assistant", [{"type": "text", "text": "sub done"}], mid="m9",
                     isSidechain=True, agentId="ag1")  # fmt: skip
    path = write(tmp_path, [
        rec("u1", None, "user", "first try"),
        rec("a1", "u1", "assistant", [{"type": "text", "text": "old answer"}], mid="m1"),
        side,
        side_reply,
        rec("a2", "u1", "assistant", [{"type": "text", "text": "new answer"}], mid="m2"),
    ])  # fmt: skip
    main, sub = trajectories(path)
    assert [m.content for m in main.messages] == ["first try", "new answer"]
    assert json.loads(main.metadata)["off_chain_records"] == 1
    assert main.is_sidechain is False
    assert sub.is_sidechain is True
    assert [m.content for m in sub.messages] == ["sub task", "sub done"]
    assert sub.native_id == "s1:ag1"
    assert sub.task == "sub task"


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_forcing_this_format_on_other_samples_only_quarantines(path: Path) -> None:
    if path.resolve() == TRANSCRIPT.resolve():
        pytest.skip("a sample of this format")
    results = list(ADAPTER.load(Source(path)))
    assert results
    assert all(isinstance(r, QuarantineRecord) for r in results)


def test_a_broken_line_does_not_cut_the_chain(tmp_path: Path) -> None:
    lines = TRANSCRIPT.read_text().splitlines()
    lines[3] = lines[3][:40]  # the Write tool result (uuid 8dd71141...) is lost
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(lines) + "\n")
    results = list(ADAPTER.load(Source(path)))
    assert isinstance(results[0], QuarantineRecord) and results[0].record_index == 3
    (record,) = results[1:]
    assert isinstance(record, TrajectoryRecord)
    # everything but the lost tool result survives, in order
    assert [m.role for m in record.messages] == [
        "user", "assistant", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert record.task is not None and record.task.startswith("Write a shell script")
    assert_paired(record.messages)
