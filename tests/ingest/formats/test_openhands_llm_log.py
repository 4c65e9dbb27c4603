"""OpenHands LLM completion-log adapter: the messages must be exactly what the model saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.openhands_llm_log import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, sample_files

LOG = next((SAMPLES / "openhands-llm-log").glob("*.json"))


def load(path: Path) -> TrajectoryRecord:
    (record,) = list(ADAPTER.load(Source(path)))
    assert isinstance(record, TrajectoryRecord), record
    return record


def raw_text(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_detects_only_llm_logs(path: Path) -> None:
    assert ADAPTER.detect(Source(path)) is (path.resolve() == LOG.resolve())


def test_registry_picks_this_adapter() -> None:
    assert detect(Source(LOG)).name == "openhands-llm-log"


def test_sample_counts() -> None:
    # jq -c '[(.messages|length), ([.messages[].tool_calls // []|length]|add),
    #   ([.messages[]|select(.role=="tool")]|length), ([.messages[].tool_calls // []|.[]
    #   |select(.function.name=="terminal")]|length), (.response.choices[0].message.tool_calls
    #   |length)]' -> [12,5,5,2,1]: 12 context messages + 1 response message = 13 messages,
    #   5 + 1 tool calls, 5 tool messages, 2 terminal (shell) calls (the reply is `finish`).
    record = load(LOG)
    msgs = record.messages
    assert len(msgs) == 13
    assert sum(len(m.tool_calls) for m in msgs) == 6
    assert sum(m.role == "tool" for m in msgs) == 5
    shell = [a for m in msgs for a in ADAPTER.parse_action(m) if a.command is not None]
    assert [a.command for a in shell] == ["pwd && ls -la", "python hello.py"]
    assert record.fidelity == "exact"


def test_messages_equal_the_source_exactly() -> None:
    raw = json.loads(LOG.read_text())
    expected = [*raw["messages"], raw["response"]["choices"][0]["message"]]
    msgs = load(LOG).messages
    assert len(msgs) == len(expected)
    for got, want in zip(msgs, expected, strict=True):
        assert got.role == want["role"]
        assert got.content == raw_text(want["content"])
        if isinstance(want["content"], list):  # the parts survive for exact replay
            assert json.loads(got.content_parts or "null") == want["content"]
        want_calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in want.get("tool_calls") or []
        ]
        assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == want_calls
        assert got.tool_call_id == want.get("tool_call_id")
        assert got.name == want.get("name")


def test_run_fields_and_per_call_metadata() -> None:
    record = load(LOG)
    raw = json.loads(LOG.read_text())
    assert record.tools is not None
    assert [t["function"]["name"] for t in json.loads(record.tools)] == [
        t["function"]["name"] for t in raw["tools"]
    ]
    assert record.system_prompt is not None
    assert record.system_prompt.startswith("You are OpenHands agent")
    assert (
        record.task
        == "Hello! Can you create a new Python file named hello.py that prints 'Hello, World!'?"
    )
    assert record.agent_model == "litellm_proxy/claude-sonnet-4-20250514"
    assert record.harness_version == "1.0.0"
    metadata = json.loads(record.metadata)
    assert metadata["call_cost_usd"] == pytest.approx(0.023172)
    assert record.cost_usd is None  # one call's cost is not the run's cost


def test_status_lines_are_the_suffix() -> None:
    observation = load(LOG).messages[11]
    prefix, payload, suffix = ADAPTER.split_observation(observation)
    assert payload == "Hello, World!"
    assert suffix.startswith("\n[The command completed with exit code 0.]\n[Current working")
    assert prefix + payload + suffix == observation.content


def test_broken_logs_are_quarantined(tmp_path: Path) -> None:
    truncated = tmp_path / "log.json"
    truncated.write_text(LOG.read_text()[:500])
    (bad,) = list(ADAPTER.load(Source(truncated)))
    assert isinstance(bad, QuarantineRecord) and bad.error_kind == "invalid_json"
    raw = json.loads(LOG.read_text())
    raw["messages"][3] = {"role": "robot", "content": "?"}
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(raw))
    (bad,) = list(ADAPTER.load(Source(wrong)))
    assert isinstance(bad, QuarantineRecord) and bad.error_kind == "wrong_shape"
    assert "message 3" in bad.message and str(wrong) in bad.message


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_forcing_this_format_on_other_samples_only_quarantines(path: Path) -> None:
    if path.resolve() == LOG.resolve():
        pytest.skip("a sample of this format")
    results = list(ADAPTER.load(Source(path)))
    assert results
    assert all(isinstance(r, QuarantineRecord) for r in results)


def _text_form(raw: dict) -> dict:
    """The sample as a non-function-calling log: calls written as `<function=...>` text and
    results as `EXECUTION RESULT of [name]:` user messages (OpenHands' prompt-based form)."""

    def render(m: dict) -> dict:
        if m["role"] == "assistant":
            text = raw_text(m.get("content") or "")
            for call in m.get("tool_calls") or []:
                args = json.loads(call["function"]["arguments"])
                params = "".join(
                    f"<parameter={k}>{v if isinstance(v, str) else json.dumps(v)}</parameter>\n"
                    for k, v in args.items()
                )
                text += f"\n<function={call['function']['name']}>\n{params}</function>"
            return {"role": "assistant", "content": text}
        if m["role"] == "tool":
            body = raw_text(m["content"])
            return {"role": "user", "content": f"EXECUTION RESULT of [{m['name']}]:\n{body}"}
        return m

    choice = raw["response"]["choices"][0]
    response = {**raw["response"], "choices": [{**choice, "message": render(choice["message"])}]}
    return {**raw, "messages": [render(m) for m in raw["messages"]], "response": response}


def _steps(path: Path) -> list:
    from builder.steps.pairing import EligibilityRules, build_steps

    return list(build_steps(load(path), ADAPTER, EligibilityRules()))


def test_text_form_calls_give_the_steps_of_the_native_log(tmp_path: Path) -> None:
    raw = json.loads(LOG.read_text())
    path = tmp_path / "text.json"
    path.write_text(json.dumps(_text_form(raw)))
    native, text = _steps(LOG), _steps(path)
    tool_results = sum(m["role"] == "tool" for m in raw["messages"])
    assert len(text) == len(native) == tool_results == 5
    assert [(s.action.tool, s.action.command) for s in text] == [
        (s.action.tool, s.action.command) for s in native
    ]
    assert [s.observation for s in text] == [s.observation for s in native]
    assert sum(s.eligible for s in text) == sum(s.eligible for s in native) >= 1
    reply = load(path).messages[-1]
    assert not reply.tool_calls and "<function=finish>" in reply.content  # same form as the rest


def test_native_copy_beside_text_form_is_read(tmp_path: Path) -> None:
    raw = json.loads(LOG.read_text())
    doc = _text_form(raw)
    doc["raw_messages"], doc["raw_response"] = raw["messages"], raw["response"]
    path = tmp_path / "both.json"
    path.write_text(json.dumps(doc))
    assert load(path).messages == load(LOG).messages
    assert json.loads(load(path).metadata)["messages_from"] == "raw_messages"


def test_a_null_choice_is_read_as_a_log_without_its_response(tmp_path: Path) -> None:
    """`"choices": [null]` (found by the fuzz test): the context is kept, the response left
    out, and nothing raises."""
    raw = json.loads(LOG.read_text())
    raw["response"]["choices"] = [None]
    path = tmp_path / LOG.name
    path.write_text(json.dumps(raw))
    [traj] = list(ADAPTER.load(Source(path)))
    assert isinstance(traj, TrajectoryRecord)
    assert len(traj.messages) == len(raw["messages"])
    assert json.loads(traj.metadata or "{}")["response_included"] is False
