"""Secret scrubbing: seeded credentials never survive, ordinary code and hashes are untouched."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
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

RNG = random.Random(20261129)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
LOWER_HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def rand(chars: str, n: int) -> str:
    return "".join(RNG.choice(chars) for _ in range(n))


def mixed(chars: str, n: int) -> str:
    """A random token guaranteed to hold upper, lower and digits (like real keys do)."""
    return "Aa1" + rand(chars, n - 3)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def fake_jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rand(string.digits, 10), "name": "Jane"}).encode())
    return f"{header}.{payload}.{b64url(RNG.randbytes(32))}"


def fake_pem() -> str:
    body = base64.b64encode(RNG.randbytes(300)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    )


# (kind, secret value, text it is embedded in). Each value is a fresh random fake.
SEEDED: list[tuple[str, str, str]] = [
    (
        "aws_access_key",
        "AKIA" + rand(UPPER_DIGITS, 16),
        "aws_access_key_id = {v}\nregion = eu-west-1",
    ),
    ("aws_secret_key", mixed(B64, 40), 'AWS_SECRET = None\naws_secret_access_key = "{v}"'),
    (
        "github_token",
        "ghp_" + mixed(ALNUM, 36),
        "git clone https://github.com/acme/app (token {v})",
    ),
    (
        "gitlab_token",
        "glpat-" + mixed(URLSAFE, 20),
        "curl --header 'PRIVATE-TOKEN: {v}' https://gitlab",
    ),
    (
        "slack_token",
        f"xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-"
        + rand(string.ascii_lowercase, 24),
        "SLACK_BOT = '{v}'",
    ),
    (
        "slack_webhook",
        f"https://hooks.slack.com/services/T{rand(UPPER_DIGITS, 8)}/B{rand(UPPER_DIGITS, 8)}/"
        + rand(ALNUM, 24),
        "requests.post('{v}', json=payload)",
    ),
    ("stripe_key", "sk_live_" + mixed(ALNUM, 24), "stripe.api_key = {v}"),
    ("openai_key", "sk-proj-" + mixed(URLSAFE, 64), "client = OpenAI(api_key={v})"),
    ("anthropic_key", "sk-ant-api03-" + mixed(URLSAFE, 93), "Using key {v} for claude"),
    ("huggingface_token", "hf_" + mixed(ALNUM, 34), "huggingface-cli login --token {v}"),
    ("google_api_key", "AIza" + mixed(URLSAFE, 35), "https://maps.googleapis.com/api?key={v}&q=x"),
    ("npm_token", "npm_" + mixed(ALNUM, 36), "publish with {v}"),
    (
        "pypi_token",
        "pypi-AgEIcHlwaS5vcmc" + mixed(URLSAFE, 80),
        "password: {v}\nusername: __token__",
    ),
    (
        "sendgrid_key",
        f"SG.{mixed(URLSAFE, 22)}.{mixed(URLSAFE, 43)}",
        "sg = SendGridAPIClient({v})",
    ),
    ("twilio_key", "SK" + "1" + rand(LOWER_HEX, 31), "TWILIO key={v}"),
    ("mailgun_key", "key-" + rand(LOWER_HEX, 32), "auth=('api', {v})"),
    ("mailchimp_key", rand(LOWER_HEX, 32) + "-us12", "mailchimp.set_config({{'api_key': {v}}})"),
    ("telegram_bot_token", f"{rand(string.digits, 9)}:{mixed(URLSAFE, 35)}", "bot = Bot({v})"),
    ("jwt", fake_jwt(), "Cookie: session={v}; Path=/"),
    ("private_key", fake_pem(), "$ cat ~/.ssh/id_rsa\n{v}\n$ ls"),
    (
        "url_password",
        "Pg" + mixed(ALNUM, 14),
        "DATABASE_URL postgres://app:{v}@db.internal:5432/prod",
    ),
    ("url_password", "r3d1s" + rand(ALNUM, 10), "redis://default:{v}@cache:6379/0"),
    ("env_secret", "django-insecure-" + mixed(ALNUM, 30), "DEBUG=1\nDJANGO_SECRET_KEY={v}\nDB=x"),
    ("env_secret", "hunter2" + rand(ALNUM, 5), "export DB_PASSWORD='{v}'"),
    ("bearer_token", mixed(URLSAFE, 40), "-H 'Authorization: Bearer {v}'"),
    (
        "basic_auth_header",
        base64.b64encode(b"admin:" + RNG.randbytes(9)).decode(),
        "Authorization: Basic {v}",
    ),
    (
        "azure_storage_key",
        "AccountKey=" + base64.b64encode(RNG.randbytes(66)).decode(),
        "DefaultEndpointsProtocol=https;AccountName=acme;{v};EndpointSuffix=core.windows.net",
    ),
    (
        "connection_string_password",
        "P4ss" + rand(ALNUM, 8) + "!",
        "Server=tcp:db,1433;Database=app;User Id=sa;Password={v};",
    ),
    ("assigned_secret", "Tr0ub4dor" + rand(ALNUM, 6), 'settings = {{"db_password": "{v}"}}'),
    ("github_token", "github_pat_" + mixed(ALNUM, 22) + "_" + mixed(ALNUM, 59), "GH={v}"),
]


@pytest.mark.parametrize(("kind", "value", "template"), SEEDED, ids=[s[0] for s in SEEDED])
def test_each_seeded_secret_is_redacted_under_its_kind(
    kind: str, value: str, template: str
) -> None:
    scrubber = Scrubber()
    out = scrubber.scrub(template.format(v=value))
    assert value not in out
    assert f"[REDACTED:{kind}]" in out
    assert scrubber.counts == {kind: 1}


def test_at_least_twenty_kinds_are_seeded_and_counted_in_one_document() -> None:
    kinds = {kind for kind, _, _ in SEEDED}
    assert len(kinds) >= 20
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
    assert scrubber.counts["bearer_token"] == 2  # once in the tool call, once in the observation
    assert scrubber.counts["huggingface_token"] == 2  # content_parts and observation
    assert scrubber.counts["private_key"] == 2  # heredoc (JSON-escaped) and observation
    assert scrubber.counts["aws_access_key"] == 2  # metadata and observation
    assert json.loads(back.metadata)["env"]["AWS_ACCESS_KEY_ID"] == "[REDACTED:aws_access_key]"
    assert back.trajectory_id == record.trajectory_id
    assert len(scrubber.counts) >= 20


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


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


NEGATIVE: list[str] = [
    # git log with SHAs
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Jane Roe <jane@example.org>\n"
    "Date:   Mon Nov 2 10:00:00 2026 +0000\n\n    Fix token parsing (#123)\n\n"
    "commit e83c5163316f89bfbde7d9ab23ca2e25604af290\nMerge: 1a2b3c4 5d6e7f8\n",
    # a diff touching credential handling code
    "diff --git a/app/auth.py b/app/auth.py\nindex 83db48f..bf269f4 100644\n--- a/app/auth.py\n"
    "+++ b/app/auth.py\n@@ -10,7 +10,7 @@ def login(user):\n-    password = getpass()\n"
    "+    password = getpass.getpass('Password: ')\n     token = tokens[i]\n"
    '     api_key=None\n     key = os.environ["API_KEY"]\n',
    # code that names secrets without holding any
    "import os\n\nAPI_KEY = os.environ.get('OPENAI_API_KEY')\n"
    'SECRET_KEY = os.getenv("SECRET_KEY")\n'
    "def connect(password: str | None = None, token: str = '') -> None:\n"
    "    headers = {'Authorization': f'Bearer {token}'}\n    password = password or getpass()\n"
    "    self.api_key = api_key\n    max_tokens = 4096\n    token_type = 'bearer'\n"
    "    access_key = config['aws']['access_key']\n    TOKENIZERS_PARALLELISM=false\n",
    # names that contain a secret word but hold ordinary values
    'tokenizer_name = "Llama-2-7b-hf"\nmodel_tokens = "gpt2-medium-v2"\n'
    "PASSWORD_HASHERS=django.contrib.auth.hashers.PBKDF2PasswordHasher\n"
    "GITHUB_TOKEN_URL=https://api.github.com/app/installations/12/access_tokens\n"
    "The API uses Bearer authentication-with-opaque-tokens in the header.\n",
    # .env template with placeholders and references
    "DATABASE_URL=postgres://user:${DB_PASSWORD}@localhost/app\nSECRET_KEY=changeme\n"
    "API_TOKEN=$API_TOKEN\nPASSWORD=\nMAX_TOKENS=4096\nAUTH_TYPE=oauth2\n",
    # pip freeze
    "attrs==23.2.0\ncertifi==2024.2.2\ncryptography==42.0.5\nhuggingface-hub==0.24.6\n"
    "numpy==1.26.4\npydantic_core==2.16.3\nscikit-learn==1.4.1.post1\ntokenizers==0.19.1\n",
    # sha256sum output and hashes in JSON
    f"{_sha('a')}  dist/app-1.0.tar.gz\n{_sha('b')}  dist/app-1.0-py3-none-any.whl\n",
    json.dumps(
        {
            "id": str(uuid.UUID(int=RNG.getrandbits(128))),
            "sha": _sha("c"),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(b"x").digest()).decode(),
            "git_sha": "9fceb02d0ae598e95dc970b74767f19372d61af8",
            "md5": hashlib.md5(b"x").hexdigest(),
            "token_count": 1234,
            "password_hint": None,
        },
        indent=2,
    ),
    # UUIDs, base64 in code, URLs without credentials
    "\n".join(str(uuid.UUID(int=RNG.getrandbits(128))) for _ in range(5))
    + "\nICON = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=='\n"
    "https://github.com/django/django/blob/main/django/db/models/query.py#L1234\n"
    "git@github.com:acme/app.git\nssh://git@github.com/acme/app.git\n",
    # pytest output and a traceback
    "tests/test_auth.py::test_token_refresh PASSED [ 50%]\n"
    "tests/test_auth.py::test_password_reset FAILED [100%]\n"
    'E   AssertionError: assert "sk-test" == "sk-live"\n'
    'Traceback (most recent call last):\n  File "/usr/lib/python3.11/secrets.py", line 42\n',
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_code_hashes_and_ids_are_left_byte_identical(text: str) -> None:
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text
    assert scrubber.counts == {}


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
