"""Cline and Roo Code task histories: the samples under tests/ingest/formats/data/cline and
roo-code (written by us from the extensions' history format, see tests/SOURCES.md), checked
against counts read from the raw files with `json`, and the XML tool grammar."""

from __future__ import annotations

import json
import re
from pathlib import Path

from builder.ingest.formats import detect
from builder.ingest.formats.cline import ADAPTER
from builder.ingest.formats.cline_grammar import split_result, xml_tool_use
from builder.ingest.formats.source import Source
from tests.ingest.formats.common import (
    DATA,
    assert_paired,
    data_files,
    loaded,
    sample_files,
    steps_of,
)

(CLINE,) = [p for p in data_files("cline") if p.name == "api_conversation_history.json"]
(ROO,) = data_files("roo-code")
TOOL_TAG = re.compile(r"<(execute_command|read_file|replace_in_file|attempt_completion)>")


def texts(message: dict) -> list[str]:
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


def test_xml_history_counts_equal_the_raw_file() -> None:
    raw = json.loads(CLINE.read_text())
    (record,) = loaded(ADAPTER, CLINE)
    assert [m.role for m in record.messages] == [m["role"] for m in raw]
    assert record.harness == "cline" and record.agent_model == "anthropic/claude-sonnet-4.5"
    steps = steps_of(ADAPTER, record)
    # every assistant turn is answered by a user turn: one step each, but for the last
    answered = [i for i, m in enumerate(raw[:-1]) if m["role"] == "assistant"]
    assert [s.action_message_index for s in steps] == answered
    tools = [TOOL_TAG.search("\n".join(texts(raw[i]))) for i in answered]
    assert [s.action.tool if s.action else None for s in steps] == [
        t.group(1) if t else None for t in tools
    ]
    no_tool = next(s for s in steps if s.action is None)
    assert no_tool.ineligible_reason == "no_action"
    before = steps[steps.index(no_tool) - 1]  # its next action comes after a rejected turn
    assert before.ineligible_reason == "next_action_rejected"


def test_the_observation_is_the_tool_output_without_the_envelope() -> None:
    raw = json.loads(CLINE.read_text())
    (record,) = loaded(ADAPTER, CLINE)
    for step in steps_of(ADAPTER, record):
        parts = texts(raw[step.observation_message_index])
        if parts[0].endswith("] Result:"):
            body = parts[1]
            body = body.split("Output:\n", 1)[1] if body.startswith("Command executed") else body
            assert step.observation == body.rstrip("\n")
        assert "<environment_details>" not in step.observation


def test_native_tool_history_and_a_condense_make_two_windows() -> None:
    raw = json.loads(ROO.read_text())
    records = loaded(ADAPTER, ROO)
    summary = next(i for i, m in enumerate(raw) if m.get("isSummary"))
    assert len(records) == 2 and all(r.harness == "roo-code" for r in records)
    first, second = records
    uses = [[b for b in m["content"] if b.get("type") == "tool_use"] for m in raw]
    results = [[b for b in m["content"] if b.get("type") == "tool_result"] for m in raw]
    for record, part in ((first, raw[:summary]), (second, [raw[0], *raw[summary:]])):
        kept = [m for m in part if not m.get("condenseParent") or record is first]
        calls = [b["id"] for m in kept for b in m["content"] if b.get("type") == "tool_use"]
        assert [c.id for m in record.messages for c in m.tool_calls] == calls
        assert_paired(record.messages)
    assert sum(map(len, uses)) == sum(len(m.tool_calls) for r in records for m in r.messages)
    assert sum(map(len, results)) == sum(m.role == "tool" for r in records for m in r.messages)
    hidden = [json.dumps(m) for m in raw if m.get("condenseParent")]
    assert hidden and not any(
        m.content and m.content in h for m in second.messages[2:] for h in hidden
    )
    shell = [
        s for s in steps_of(ADAPTER, second, 0) if s.action and s.action.tool == "execute_command"
    ]
    assert shell[0].action.command == "python -m pytest -q"
    assert shell[0].observation.startswith("=====") and "Exit code" not in shell[0].observation


def test_xml_grammar() -> None:
    (action,) = xml_tool_use(
        "<thinking>maybe <read_file> later</thinking>\n<execute_command>\n"
        "<command>ls -la</command>\n<requires_approval>false</requires_approval>\n"
        "</execute_command>\n<read_file><path>x</path></read_file>"
    )  # only the first tool use outside <thinking> runs
    assert action.tool == "execute_command" and action.command == "ls -la"
    assert json.loads(action.arguments) == {"command": "ls -la", "requires_approval": "false"}
    (edit,) = xml_tool_use(
        "<write_to_file>\n<path>a.py</path>\n<content>\n<b></content>\n</content>"
    )
    assert json.loads(edit.arguments)["content"] == "<b></content>"  # ends at the last close
    assert xml_tool_use("Just talking.") == []
    head, body, tail = split_result(
        "[execute_command for 'ls'] Result:\nCommand executed.\nOutput:\na\nb\n\n"
        "<environment_details>\nx\n</environment_details>"
    )
    assert (
        body == "a\nb"
        and head.endswith("Output:\n")
        and tail.startswith("\n\n<environment_details>")
    )


def test_registry_detects_only_histories() -> None:
    for path in (CLINE, ROO):
        assert detect(Source(path)).name == "cline"
    for path in sample_files() + [p for p in DATA.rglob("*.json*") if p not in (CLINE, ROO)]:
        assert not ADAPTER.detect(Source(path)), path


def test_a_folder_walk_passes_over_the_task_sidecars(tmp_path: Path) -> None:
    from builder.ingest.expand import InputSpec, expand

    found = [s.path.name for s in expand(InputSpec(str(CLINE.parent)))]
    assert found == ["api_conversation_history.json"]
