"""OpenHands SDK (v1) event-log adapter on the real events.jsonl, plus broken inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.openhands_v1 import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, assert_paired, sample_files

EVENTS = SAMPLES / "openhands-v1-sdk" / "events.jsonl"


def load(path: Path) -> TrajectoryRecord:
    (record,) = list(ADAPTER.load(Source(path)))
    assert isinstance(record, TrajectoryRecord), record
    return record


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_detects_only_sdk_event_logs(path: Path) -> None:
    assert ADAPTER.detect(Source(path)) is (path.resolve() == EVENTS.resolve())


def test_registry_picks_this_adapter() -> None:
    assert detect(Source(EVENTS)).name == "openhands-v1"


def test_sample_counts() -> None:
    # jq -c .kind events.jsonl | sort | uniq -c -> 2 ActionEvent, 3 ObservationEvent,
    #   5 ConversationStateUpdateEvent (not chat turns).
    # jq -s '[.[]|select(.kind=="ActionEvent")|.id] as $a | [.[]|select(.kind=="ObservationEvent")
    #   |(.action_id as $x|($a|index($x)) != null)]' -> [true,false,true]: one observation's
    #   action is missing from the log and gets a synthesized call.
    # So 3 assistant turns (2 + 1 synthesized) with one call each, 3 tool messages, 6 messages;
    # every call is a `terminal` call (TerminalAction) -> 3 shell actions.
    record = load(EVENTS)
    msgs = record.messages
    assert len(msgs) == 6
    assert sum(len(m.tool_calls) for m in msgs) == 3
    assert sum(m.role == "tool" for m in msgs) == 3
    actions = [a for m in msgs for a in ADAPTER.parse_action(m)]
    assert sum(a.command is not None for a in actions) == 3
    assert [m.role for m in msgs] == ["assistant", "tool"] * 3
    assert_paired(msgs)
    assert json.loads(record.metadata)["event_counts"]["synthesized_calls"] == 1


def test_commands_pair_with_their_observations() -> None:
    msgs = load(EVENTS).messages
    first = ADAPTER.parse_action(msgs[0])[0]
    assert first.tool == "terminal"
    assert first.command is not None and first.command.startswith('SESSION_URL="${AUTOMATION_')
    assert msgs[1].tool_call_id == "chatcmpl-tool-9d0341c7a033ae28"
    assert msgs[1].content.startswith("Cannot execute multiple commands at once.")
    last = ADAPTER.parse_action(msgs[4])[0]
    assert last.command is not None and " && echo " in last.command
    assert msgs[5].tool_call_id == "chatcmpl-tool-9fa678118a57807d"
    assert msgs[5].content.startswith("SESSION_URL=<secret-hidden>\nTraceback")
    # the thought of the action is the assistant content
    assert msgs[4].content.startswith("<think>Let me chain these properly")


def test_status_lines_are_rebuilt_and_split_off() -> None:
    msgs = load(EVENTS).messages
    prefix, payload, suffix = ADAPTER.split_observation(msgs[5])
    # the SDK's to_llm_content: prefix + text + suffix, then cwd / interpreter / exit code lines
    assert suffix == (
        "\n[The command completed with exit code 1.]"
        "\n[Current working directory: /workspace/project]"
        "\n[Python interpreter: /usr/local/bin/python]"
        "\n[Command finished with exit code 1]"
    )
    assert prefix + payload + suffix == msgs[5].content
    assert payload.endswith("JSONDecodeError: Expecting value: line 2 column 1 (char 1)")
    # exit code -1 and no working dir: nothing is added
    assert not ADAPTER.split_observation(msgs[1])[2]


def test_run_metadata_from_state_updates() -> None:
    record = load(EVENTS)
    # last `stats` update: jq -s '[.[]|select(.key=="stats")]|last|.value.usage_to_metrics
    #   .default.accumulated_token_usage|[.prompt_tokens,.completion_tokens]' -> [107458,1347]
    assert (record.prompt_tokens, record.completion_tokens) == (107458, 1347)
    assert record.agent_model == "litellm_proxy/minimax-m2.7"
    assert record.exit_status == "running"
    assert record.fidelity == "reconstructed"


def test_parallel_calls_of_one_response_share_one_turn(tmp_path: Path) -> None:
    def action(n: int, thought: str) -> dict[str, object]:
        command = {"command": f"echo {n}"}
        return {
            "id": f"a{n}", "source": "agent", "kind": "ActionEvent", "llm_response_id": "r1",
            "thought": [{"type": "text", "text": thought}], "tool_name": "terminal",
            "tool_call_id": f"c{n}", "action": {"kind": "TerminalAction", "command": f"echo {n}"},
            "tool_call": {"id": f"c{n}", "name": "terminal", "arguments": json.dumps(command)},
        }  # fmt: skip

    def observation(n: int) -> dict[str, object]:
        return {
            "id": f"o{n}", "source": "environment", "kind": "ObservationEvent",
            "tool_name": "terminal", "tool_call_id": f"c{n}", "action_id": f"a{n}",
            "observation": {"content": [{"type": "text", "text": str(n)}]},
        }  # fmt: skip

    user = {
        "id": "u", "source": "user", "kind": "MessageEvent",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
    }  # fmt: skip
    lines = [user, action(1, "both"), action(2, ""), observation(2), observation(1)]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    results = list(ADAPTER.load(Source(path)))
    assert isinstance(results[0], QuarantineRecord) and results[0].record_index == 5
    record = results[1]
    assert isinstance(record, TrajectoryRecord)
    assert [m.role for m in record.messages] == ["user", "assistant", "tool", "tool"]
    assert [c.id for c in record.messages[1].tool_calls] == ["c1", "c2"]
    assert record.task == "go"
    assert_paired(record.messages)


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_forcing_this_format_on_other_samples_only_quarantines(path: Path) -> None:
    if path.resolve() == EVENTS.resolve():
        pytest.skip("a sample of this format")
    results = list(ADAPTER.load(Source(path)))
    assert results
    assert all(isinstance(r, QuarantineRecord) for r in results)
