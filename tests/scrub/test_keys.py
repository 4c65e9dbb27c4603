"""Private key blocks: the whole block goes, the text after it stays."""

from __future__ import annotations

import json

import pytest

from builder.scrub import Scrubber
from builder.scrub.keys import RULES
from tests.scrub import fakes

FULL, TRUNCATED, PUTTY = RULES


@pytest.mark.parametrize(
    "block",
    [
        fakes.pem("RSA PRIVATE KEY"),
        fakes.pem("ENCRYPTED PRIVATE KEY"),
        fakes.encrypted_legacy_pem(),
        fakes.pgp_key(),
        fakes.ssh2_key(),
    ],
    ids=["rsa", "pkcs8-encrypted", "legacy-encrypted", "pgp", "ssh2"],
)
def test_the_begin_end_rule_matches_whole_blocks(block: str) -> None:
    match = FULL.regex.search(f"x\n{block}\ny")
    assert match is not None and match.group(0) == block


def test_an_encrypted_legacy_body_is_redacted_with_its_headers() -> None:
    block = fakes.encrypted_legacy_pem()
    body = block.split("\n\n", 1)[1].splitlines()[0]
    out = Scrubber().scrub(f"$ cat server.key\n{block}\nnext line: kept")
    assert out == "$ cat server.key\n[REDACTED:private_key]\nnext line: kept"
    assert "Proc-Type" not in out and body not in out


def test_a_truncated_block_loses_its_body_but_not_the_next_line() -> None:
    block = fakes.encrypted_legacy_pem().rsplit("\n", 2)[0]  # no END line
    out = Scrubber().scrub(f"{block}\nHello world: foo\n$ ls")
    assert out == "[REDACTED:private_key]\nHello world: foo\n$ ls"
    match = TRUNCATED.regex.search(f"{block}\nHello world")
    assert match is not None and match.group(0) == block


def test_a_json_escaped_key_is_redacted_and_the_json_stays_valid() -> None:
    doc = json.dumps({"type": "service_account", "private_key": fakes.pem("PRIVATE KEY")})
    out = Scrubber().scrub(doc)
    assert json.loads(out) == {"type": "service_account", "private_key": "[REDACTED:private_key]"}


def test_a_putty_key_stops_at_its_last_line() -> None:
    key = fakes.putty_key()
    assert Scrubber().scrub(f"{key}\nuse it with pageant") == (
        "[REDACTED:private_key]\nuse it with pageant"
    )
    match = PUTTY.regex.search(key)
    assert match is not None and match.group(0) == key


def test_certificates_and_public_keys_are_kept() -> None:
    text = fakes.pem("CERTIFICATE") + "\n" + fakes.pem("PUBLIC KEY")
    assert Scrubber().scrub(text) == text
