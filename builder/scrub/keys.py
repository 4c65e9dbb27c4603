"""Private key blocks: PEM (PKCS#1/#8, OpenSSH, EC, DSA, encrypted legacy), PGP, SSH2, PuTTY.

A whole BEGIN…END block is replaced. A block cut short (a truncated observation, `head -5
id_rsa`) still has its header and every body line redacted: RFC 1421 headers
(`Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`), blank lines and whole base64 lines, and nothing
after the first line that is none of these. Newlines may be real or JSON-escaped (`\\n`), as in
tool-call arguments and service-account JSON files.
"""

from __future__ import annotations

import re

from builder.scrub.rule import Rule

_DASHES = r"-{4,5} ?"
_END_DASHES = r" ?-{4,5}"
_HEAD = rf"{_DASHES}BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?){_END_DASHES}"
_NL = r"(?:\r?\n|\\r\\n|\\n)"
_EOL = r"(?=\r?\n|\\r|\\n|$|[\"'])"
# Header lines (RFC 1421, PGP armour), at most one blank line, then lines of base64 only.
_BODY = (
    rf"(?:{_NL}[A-Za-z][A-Za-z0-9-]*: [^\n\\]*){{0,8}}(?:{_NL}(?={_NL}))?"
    rf"(?:{_NL}[A-Za-z0-9+/=]{{4,}}{_EOL}){{0,400}}"
)

RULES: tuple[Rule, ...] = (
    # The groups always take part (the `BLOCK` one may be empty), so the END line's
    # backreferences always resolve.
    Rule(
        "private_key",
        re.compile(rf"{_HEAD}[\s\S]{{0,50000}}?{_DASHES}END \1PRIVATE KEY\2{_END_DASHES}"),
        hints=("private key",),
    ),
    Rule("private_key", re.compile(_HEAD + _BODY), hints=("private key",)),
    Rule(
        "private_key",
        re.compile(
            r"PuTTY-User-Key-File-\d: [^\n\\]*(?:(?:\r?\n|\\n)"
            r"(?:[A-Za-z][A-Za-z0-9-]*: [^\n\\]*|[A-Za-z0-9+/=]{4,}(?=\r?\n|\\n|$)))*"
        ),
        hints=("putty-user-key-file-",),
    ),
)
