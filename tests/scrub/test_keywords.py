"""Assignments to secret-sounding names: the leaks the issue found, and names that hold none."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from builder.scrub import Scrubber
from builder.scrub.entropy import digest_like, looks_random
from builder.scrub.keywords import name_class
from tests.scrub.fakes import ALNUM, B64, URLSAFE, discord_token, mixed, rand

AWS = mixed(B64, 40)
LEAKS = [
    (f"export AWS_SECRET='aws_secret_access_key = {AWS}'", AWS, "env_secret"),
    (f"token = {(t := discord_token())}", t, "discord_bot_token"),
    (f"redis-cli -u redis://:{(pw := 'pw' + rand(ALNUM, 8))}@cache:6379", pw, "url_password"),
    (f"DB_PASS={(v := 'db' + rand(ALNUM, 8))}", v, "env_secret"),
    (f"db_pass='{(v2 := 'x9' + rand(ALNUM, 6))}'", v2, "assigned_secret"),
    (f"env:\n  MYSQL_ROOT_PASSWORD: {(v3 := 'r' + rand(ALNUM, 9))}\n", v3, "yaml_secret"),
    (f"mysqladmin --password {(v4 := 'p' + rand(ALNUM, 9))} status", v4, "cli_password"),
    (f"mysql -uroot -p'{(v5 := 'q' + rand(ALNUM, 9))}' app", v5, "cli_password"),
    (f'{{"cmd": "cd app\\nDB_PASSWORD={(v6 := "j" + rand(ALNUM, 9))}\\nrun"}}', v6, "env_secret"),
]


@pytest.mark.parametrize(("text", "value", "kind"), LEAKS, ids=[k for _, _, k in LEAKS])
def test_each_leak_from_the_issue_is_redacted(text: str, value: str, kind: str) -> None:
    scrubber = Scrubber()
    out = scrubber.scrub(text)
    assert value not in out and scrubber.counts == {kind: 1}, out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("db_pass", "password"),
        ("mysql_root_password", "password"),
        ("db-password", "password"),
        ("spring.datasource.password", "password"),
        ("api_key", "token"),
        ("apikey", "token"),
        ("client_secret", "token"),
        ("github_token", "token"),
        ("bypass", None),
        ("compass", None),
        ("cache_key", None),
        ("tokenizer", None),
        ("password_hint", None),
    ],
)
def test_names_are_classed_by_the_keyword_they_end_with(name: str, expected: str | None) -> None:
    assert name_class(name) == expected


def test_the_entropy_plugins_spare_digests_and_ids_but_not_random_tokens() -> None:
    spared = [
        hashlib.sha1(b"a").hexdigest(),
        hashlib.sha256(b"a").hexdigest(),
        hashlib.md5(b"a").hexdigest(),
        str(uuid.uuid5(uuid.NAMESPACE_DNS, "example.org")),
        "sha256:" + hashlib.sha256(b"b").hexdigest(),
        "sha512-" + "z" * 86,
    ]
    assert all(digest_like(v) and not looks_random(v) for v in spared)
    assert not looks_random("tokens_per_second_limit")
    assert not looks_random("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
    assert all(looks_random(rand(URLSAFE, n)) for n in (20, 32, 40, 64))


def test_a_random_value_under_a_hash_name_is_kept_only_when_it_is_a_digest() -> None:
    digest = hashlib.sha256(b"c").hexdigest()
    token = rand(URLSAFE, 40)
    text = f'session_token_sha256 = "{digest}"\nsession_token_value = "{token}"'
    scrubber = Scrubber()
    out = scrubber.scrub(text)
    assert digest in out and token not in out
    assert scrubber.counts == {"high_entropy_secret": 1}
