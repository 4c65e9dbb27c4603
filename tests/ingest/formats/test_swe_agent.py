"""SWE-agent `.traj` adapter on the real 0.x and 1.x sample runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import grammars
from builder.ingest.formats.base import content_text
from builder.ingest.formats.source import Source
from builder.ingest.formats.swe_agent import ADAPTER
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, observation_count, steps_of

PYDICOM = SAMPLES / "swe-agent" / "pydicom__pydicom-1458.traj"  # 0.x, one demo message
MARSHMALLOW = SAMPLES / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"  # 1.x tool calls
XML_CALLS = Path(__file__).parent / "data" / "swe-agent" / "xml-function-calling.traj"


def load_one(path: Path) -> TrajectoryRecord:
    [record] = list(ADAPTER.load(Source(path)))
    assert isinstance(record, TrajectoryRecord)
    return record


# Expected numbers counted with jq, independently of the adapter:
#   messages: jq '.history|length'; demos: jq '[.history[]|select(.is_demo==true)]|length'
#   one action: jq '[.history[]|select(.role=="assistant" and (.is_demo!=true))
#     |select(((.tool_calls//[])|length)==1 or (((.tool_calls//[])|length)==0
#     and ([.content|scan("(?m)^```")]|length)==2))]|length'
#   observations: the step rule written in jq (tool messages up to the next assistant after a
#     tool-call turn, else 1 when the next message is a user message), summed.
@pytest.mark.parametrize(
    ("path", "n_messages", "n_demo", "n_one_action", "n_observations"),
    [(PYDICOM, 26, 1, 12, 11), (MARSHMALLOW, 24, 0, 11, 11)],
)
def test_sample_counts(
    path: Path, n_messages: int, n_demo: int, n_one_action: int, n_observations: int
) -> None:
    record = load_one(path)
    assert len(record.messages) == n_messages
    assert sum(m.is_demo for m in record.messages) == n_demo
    one = [
        m
        for m in record.messages
        if m.role == "assistant" and not m.is_demo and len(ADAPTER.parse_action(m)) == 1
    ]
    assert len(one) == n_one_action
    assert observation_count(record.messages) == n_observations


@pytest.mark.parametrize("path", [PYDICOM, MARSHMALLOW])
def test_canonical_messages_equal_history(path: Path) -> None:
    history = json.loads(path.read_text())["history"]
    record = load_one(path)
    assert [(m.role, m.content) for m in record.messages] == [
        (h["role"], content_text(h["content"])[0]) for h in history
    ]
    assert [m.is_demo for m in record.messages] == [h.get("is_demo") is True for h in history]


def test_0x_actions_are_fenced_commands() -> None:
    record = load_one(PYDICOM)
    [create] = ADAPTER.parse_action(record.messages[3])
    assert (create.tool, create.command) == (grammars.SWE_AGENT_TOOL, "create reproduce_bug.py")
    [edit] = ADAPTER.parse_action(record.messages[5])
    assert edit.command is not None
    assert edit.command.startswith("edit 1:1\nimport numpy as np")
    assert edit.command.endswith("end_of_edit")
    [run] = ADAPTER.parse_action(record.messages[7])
    assert (run.tool, run.command) == ("bash", "python reproduce_bug.py")
    [submit] = ADAPTER.parse_action(record.messages[25])
    assert submit.command == "submit"


def test_0x_metadata_and_task() -> None:
    record = load_one(PYDICOM)
    assert record.native_id == "pydicom__pydicom-1458"
    assert record.exit_status == "submitted"
    assert record.cost_usd == pytest.approx(1.26719)
    assert (record.prompt_tokens, record.completion_tokens, record.api_calls) == (122612, 1369, 12)
    assert record.task is not None and record.system_prompt is not None
    assert record.task.startswith("Pixel Representation attribute should be optional")
    assert "INSTRUCTIONS:" not in record.task
    assert record.system_prompt.startswith("SETTING: You are an autonomous programmer")
    assert len(json.loads(record.metadata)["states"]) == 12


def test_1x_tool_calls_tool_messages_and_replay_config() -> None:
    record = load_one(MARSHMALLOW)
    assert record.agent_model == "gpt-4o"
    assert record.task is not None
    assert record.task.startswith("TimeDelta serialization precision")
    call = record.messages[6]
    [action] = ADAPTER.parse_action(call)
    assert (action.tool, action.command) == ("bash", "python reproduce.py")
    assert record.messages[7].role == "tool"
    assert record.messages[7].tool_call_id == call.tool_calls[0].id
    [create] = ADAPTER.parse_action(record.messages[2])
    assert (create.tool, json.loads(create.arguments)) == ("create", {"filename": "reproduce.py"})


def test_1x_xml_function_calls_are_the_actions() -> None:
    """SWE-agent-LM's mode: the call is XML in the text; a fenced block of the thought is not
    the action, and a turn of two calls is the harness's format error."""
    record = load_one(XML_CALLS)
    assert record.harness_version == "1.0.1"
    [run] = ADAPTER.parse_action(record.messages[2])
    assert (run.tool, run.command) == ("bash", "python reproduce.py")
    [edit] = ADAPTER.parse_action(record.messages[4])
    assert edit.tool == "str_replace_editor" and edit.command is None
    assert json.loads(edit.arguments) == {
        "command": "str_replace",
        "path": "/testbed/units.py",
        "old_str": "    return value",
        "new_str": "    return value * factor",
    }
    two = ADAPTER.parse_action(record.messages[6])
    assert len(two) == 2 and ADAPTER.rejected(record.messages[6], two)
    [submit] = ADAPTER.parse_action(record.messages[8])
    assert submit.tool == "submit" and not ADAPTER.rejected(record.messages[8], [submit])
    history = json.loads(XML_CALLS.read_text())["history"]
    acting = [
        h for h in history if h["role"] == "assistant" and h["content"].count("<function=") == 1
    ]
    assert sum(len(ADAPTER.parse_action(m)) == 1 for m in record.messages) == len(acting) == 3


def test_xml_observations_keep_their_marker_as_envelope() -> None:
    record = load_one(XML_CALLS)
    assert ADAPTER.split_observation(record.messages[3]) == ("OBSERVATION:\n", "1", "")
    rejected = record.messages[7]
    assert ADAPTER.split_observation(rejected) == ("", rejected.content, "")


def test_xml_run_steps_pair_each_call_with_its_observation() -> None:
    """The replay's steps: the payload without its marker, the rejected two-call turn never a
    next action to learn from, the submit last."""
    steps = steps_of(ADAPTER, load_one(XML_CALLS), min_tokens=0)
    assert [(s.action.tool if s.action else None, s.num_actions) for s in steps] == [
        ("bash", 1),
        ("str_replace_editor", 1),
        ("bash", 2),
        ("submit", 1),
    ]
    assert steps[0].observation == "1" and steps[0].eligible
    assert steps[0].next_action is not None and steps[0].next_action.tool == "str_replace_editor"
    assert [s.ineligible_reason for s in steps[1:]] == [
        "next_action_rejected",
        "multiple_actions",
        "last_step",
    ]


def test_list_content_keeps_its_parts(tmp_path: Path) -> None:
    doc = json.loads(MARSHMALLOW.read_text())
    parts = [{"type": "text", "text": "344"}, {"type": "text", "text": "(Open file: x)"}]
    doc["history"][7]["content"] = parts
    path = tmp_path / "list.traj"
    path.write_text(json.dumps(doc))
    message = load_one(path).messages[7]
    assert message.content == "344\n(Open file: x)"
    assert json.loads(message.content_parts or "null") == parts


def test_split_observation_strips_the_state_trailer() -> None:
    record = load_one(PYDICOM)
    prefix, payload, suffix = ADAPTER.split_observation(record.messages[4])
    assert (prefix, payload) == (
        "",
        "[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]\n1:\n",
    )
    assert suffix.startswith("\n(Open file: /pydicom__pydicom/reproduce_bug.py)")
    for r in (record, load_one(MARSHMALLOW)):
        for m in r.messages:
            if m.role in ("user", "tool"):
                assert "".join(ADAPTER.split_observation(m)) == m.content
    tool_prefix, tool_payload, tool_suffix = ADAPTER.split_observation(
        load_one(MARSHMALLOW).messages[7]
    )
    assert (tool_prefix, tool_payload, tool_suffix) == (
        "",
        "344",
        "\n(Open file: /testbed/reproduce.py)\n(Current directory: /testbed)\nbash-$",
    )


def test_wrong_history_shape_is_quarantined(tmp_path: Path) -> None:
    path = tmp_path / "bad.traj"
    path.write_text(json.dumps({"history": [{"role": 3}], "trajectory": [], "info": {}}))
    [row] = list(ADAPTER.load(Source(path)))
    assert isinstance(row, QuarantineRecord)
    assert (row.error_kind, row.record_index) == ("wrong_shape", 0)
    assert str(path) in row.message and "history 0" in row.message


def test_detects_its_samples_and_no_other_format() -> None:
    assert ADAPTER.detect(Source(PYDICOM)) and ADAPTER.detect(Source(MARSHMALLOW))
    others = [
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and "swe-agent" not in p.parts and p.suffix != ".md"
    ]
    assert len(others) >= 9
    assert [p for p in others if ADAPTER.detect(Source(p))] == []
