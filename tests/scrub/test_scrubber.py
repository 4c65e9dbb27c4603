"""The Scrubber: seeded credentials never survive, look-alikes are untouched, records are walked."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.scrub import Scrubber
from schemas.common import from_row, to_table
from schemas.steps import Action, StepRecord
from schemas.trajectories import TRAJECTORY_SCHEMA, Message, ToolCall, TrajectoryRecord
from tests.paths import SAMPLES, SHARED
from tests.scrub.corpus import LOOKALIKES, SEEDED
from tests.scrub.fakes import ALNUM, HEX, UPPER_DIGITS, mixed, rand


def n_seeded(kind: str) -> int:
    return sum(1 for k, _, _ in SEEDED if k == kind)


@pytest.mark.parametrize(("kind", "value", "template"), SEEDED, ids=[s[0] for s in SEEDED])
def test_each_seeded_secret_is_redacted_under_its_kind(
    kind: str, value: str, template: str
) -> None:
    scrubber = Scrubber()
    out = scrubber.scrub(template.format(v=value))
    assert value not in out
    assert f"[REDACTED:{kind}]" in out
    assert scrubber.counts == {kind: 1}


def test_forty_kinds_are_seeded_and_counted_in_one_document() -> None:
    kinds = {kind for kind, _, _ in SEEDED}
    assert len(kinds) >= 40
    scrubber = Scrubber()
    out = scrubber.scrub("\n\n".join(t.format(v=v) for _, v, t in SEEDED))
    assert not [v for _, v, _ in SEEDED if v in out]
    expected: dict[str, int] = {}
    for kind, _, _ in SEEDED:
        expected[kind] = expected.get(kind, 0) + 1
    assert scrubber.counts == expected


def test_text_around_a_secret_is_kept_verbatim() -> None:
    value = "AKIA" + rand(UPPER_DIGITS, 16)
    out = Scrubber().scrub(f"before {value} after")
    assert out == "before [REDACTED:aws_access_key] after"


def test_scrubbing_is_idempotent() -> None:
    scrubber = Scrubber()
    once = scrubber.scrub("\n".join(t.format(v=v) for _, v, t in SEEDED))
    counts = dict(scrubber.counts)
    assert scrubber.scrub(once) == once
    assert scrubber.counts == counts


def test_emails_are_redacted_only_when_asked() -> None:
    text = "Author: Jane Roe <jane.roe@example.org>\nping ops-team+alerts@corp.example.com"
    assert Scrubber().scrub(text) == text
    scrubber = Scrubber(emails=True)
    out = scrubber.scrub(text)
    assert "jane.roe@example.org" not in out and "corp.example.com" not in out
    assert scrubber.counts == {"email": 2}


def _trajectory_with_secrets() -> tuple[TrajectoryRecord, list[str]]:
    by_kind = {kind: (v, t) for kind, v, t in reversed(SEEDED)}
    env = "\n".join(by_kind[k][1].format(v=by_kind[k][0]) for k in ("env_secret", "stripe_key"))
    openai_key, bearer = by_kind["openai_key"][0], by_kind["bearer_token"][0]
    pem, hf = by_kind["private_key"][0], by_kind["huggingface_token"][0]
    command = f"curl -s -H 'Authorization: Bearer {bearer}' https://api.example.com/v1/items"
    args = json.dumps({"command": command})
    pem_args = json.dumps({"command": f"cat > key.pem <<'EOF'\n{pem}\nEOF"})
    parts = json.dumps([{"type": "text", "text": f"my token is {hf}"}])
    rest = [t.format(v=v) for _, v, t in SEEDED]
    messages = [
        Message("system", "You are a helpful assistant that can run bash."),
        Message("user", "Fix the failing test. Config:\n" + env, content_parts=parts),
        Message(
            "assistant",
            "Let me look at the API.",
            tool_calls=[ToolCall("call_1", "bash", args), ToolCall("call_2", "bash", pem_args)],
        ),
        Message("tool", f"OPENAI_API_KEY={openai_key}\n" + "\n".join(rest), tool_call_id="call_1"),
        Message("tool", "done", tool_call_id="call_2"),
    ]
    aws = by_kind["aws_access_key"][0]
    record = TrajectoryRecord(
        trajectory_id="t-secrets",
        source_format="openai-messages",
        source_path="synthetic.jsonl",
        record_index=0,
        native_id=None,
        harness="mini-swe-agent",
        harness_version=None,
        agent_model="gpt-test",
        task="Fix it",
        system_prompt=None,
        tools=None,
        messages=messages,
        metadata=json.dumps({"env": {"AWS_ACCESS_KEY_ID": aws}}),
    )
    return record, [v for _, v, _ in SEEDED]


def _all_strings(value: object) -> str:
    """Every string inside rows read back from Parquet (and inside JSON-encoded strings)."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return value + "\0" + _all_strings(decoded)
    if isinstance(value, dict):
        return "\0".join(_all_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\0".join(_all_strings(v) for v in value)
    return ""


def test_no_seeded_secret_survives_in_a_scrubbed_trajectory_written_to_parquet(
    tmp_path: Path,
) -> None:
    record, secrets = _trajectory_with_secrets()
    raw_path, clean_path = tmp_path / "raw.parquet", tmp_path / "clean.parquet"
    pq.write_table(to_table([record], TRAJECTORY_SCHEMA), raw_path)
    raw_text = _all_strings(pq.read_table(raw_path).to_pylist())
    assert all(s in raw_text for s in secrets)  # the fixture really carries every secret

    scrubber = Scrubber()
    clean = scrubber.scrub_trajectory(record)
    pq.write_table(to_table([clean], TRAJECTORY_SCHEMA), clean_path)
    rows = pq.read_table(clean_path).to_pylist()
    text = _all_strings(rows)
    assert [s for s in secrets if s in text] == []
    back = from_row(TrajectoryRecord, rows[0])
    for message in back.messages:
        for call in message.tool_calls:
            assert "command" in json.loads(call.arguments)  # arguments stay valid JSON
    assert json.loads(back.messages[1].content_parts or "")[0]["type"] == "text"
    assert back.messages[0].content == record.messages[0].content
    # each once more than in the observation: in the tool call, content_parts, the heredoc
    # (JSON-escaped) and the metadata
    for kind in ("bearer_token", "huggingface_token", "private_key", "aws_access_key"):
        assert scrubber.counts[kind] == n_seeded(kind) + 1, kind
    assert json.loads(back.metadata)["env"]["AWS_ACCESS_KEY_ID"] == "[REDACTED:aws_access_key]"
    assert back.trajectory_id == record.trajectory_id
    assert len(scrubber.counts) >= 40


def test_a_step_is_scrubbed_in_its_actions_thought_and_observation() -> None:
    token = "ghp_" + mixed(ALNUM, 36)
    db = "postgres://app:Sup3rS3cret99@db:5432/x"
    action = Action("bash", json.dumps({"command": f"export GH={token}"}), f"export GH={token}", "")
    step = StepRecord(
        trajectory_id="t1",
        step_index=3,
        action_message_index=5,
        observation_message_index=6,
        source_format="mini-swe-agent",
        harness="mini-swe-agent",
        action=action,
        thought=f"I will use {token}",
        observation=f"DATABASE_URL={db}\nok",
        next_action=Action("bash", "{}", f"psql {db}", f"psql {db}"),
        focus_question="what is the db url?",
    )
    scrubber = Scrubber()
    clean = scrubber.scrub_step(step)
    assert token not in repr(clean) and "Sup3rS3cret99" not in repr(clean)
    assert clean.action is not None and json.loads(clean.action.arguments)["command"].startswith(
        "export"
    )
    assert (clean.trajectory_id, clean.step_index) == ("t1", 3)
    assert clean.focus_question == step.focus_question
    assert scrubber.counts == {"github_token": 3, "url_password": 3}


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alikes_are_left_byte_identical(text: str) -> None:
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text
    assert scrubber.counts == {}


def test_made_up_words_spare_only_made_up_values() -> None:
    """A value of placeholder words is left alone; a word more, a digit or a random run is
    still a secret (the look-alikes hold the real settings this comes from)."""
    scrubber = Scrubber()
    for value in ("test-key-9fK2pQ", "dummy-hunter2", "fake-key-Xq81mZpLr04Tb", "django-s3cr3t"):
        text = f"SECRET_KEY='{value}'\n"
        assert value not in scrubber.scrub(text), value
    assert scrubber.scrub("SECRET_KEY='my-test-secret'\n") == "SECRET_KEY='my-test-secret'\n"
    # a 32-hex run after a vendor prefix is a token unless it is shaped as a uuid4 (pip's
    # `<project>_<uuid4 hex>` build directories)
    run = rand(HEX, 32)
    token = f"acme_{run[:12]}7{run[13:]}"
    assert token not in scrubber.scrub(f"token: {token}\n")
    build_dir = f"mysqlclient_{uuid.UUID(hex=run, version=4).hex}"
    assert scrubber.scrub(f"cwd: /tmp/pip-install-x/{build_dir}/\n") == (
        f"cwd: /tmp/pip-install-x/{build_dir}/\n"
    )


def test_real_trajectories_have_no_false_positives() -> None:
    files = sorted(p for root in (SHARED, SAMPLES) for p in root.rglob("*") if p.is_file())
    assert len(files) >= 5
    scrubber = Scrubber()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert scrubber.scrub(text) == text, (path, scrubber.find(text)[:3])
    assert scrubber.counts == {}


def test_merge_adds_counts_from_other_workers_and_threads_do_not_lose_counts() -> None:
    value = "ghp_" + mixed(ALNUM, 36)
    shared = Scrubber()
    threads = [
        threading.Thread(target=lambda: [shared.scrub(f"x {value} y") for _ in range(50)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.counts == {"github_token": 200}
    shared.merge({"github_token": 1, "jwt": 2})
    assert shared.counts == {"github_token": 201, "jwt": 2}


def test_tokens_after_a_json_escaped_newline_are_redacted() -> None:
    token, email = "ghp_" + mixed(ALNUM, 36), "ops@example.org"
    text = json.dumps({"output": f"$ env\n{token}\nmysql -uroot -pR00tpw x\n{email}"})
    scrubber = Scrubber(emails=True)
    out = json.loads(scrubber.scrub(text))["output"]
    assert out == (
        "$ env\n[REDACTED:github_token]\nmysql -uroot -p[REDACTED:cli_password] x\n[REDACTED:email]"
    )
