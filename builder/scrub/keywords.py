"""Secret-sounding names (detect-secrets' keyword list) and the rules that key off them.

Each rule's regex starts at a short anchor (`pass`, `secret`, `key`, `token`, ...), which `re`
scans for far faster than the 20 keywords with their prefixes. The vet then reads the whole
name back from the text and asks what it is: a password name (`db_pass`, `MYSQL_ROOT_PASSWORD`)
takes any literal that is not a reference or a type name; a token name (`api_key`,
`client_secret`) takes a token-like value; a name that only contains a keyword
(`client_secret_value`) takes a value the entropy plugins call random; other names
(`cache_key`, `bypass`, `max_tokens`) take nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from detect_secrets.plugins.keyword import DENYLIST

from builder.scrub.entropy import looks_random
from builder.scrub.families import random_run
from builder.scrub.rule import Rule, mixed, mixed_secret, password_value, secret_value

_PASSWORDS = tuple(w for w in DENYLIST if "pass" in w or w in ("pwd", "contraseña", "contrasena"))
PASSWORD_WORDS = (*_PASSWORDS, "passphrase", "pass")
TOKEN_WORDS = (
    *(w for w in DENYLIST if w not in _PASSWORDS),
    "token", "access_?key", "secret_?key", "credentials?",
)  # fmt: skip
HINTS = ("secret", "pass", "pwd", "token", "key", "credential", "contrase")
ANCHOR = r"(?P<word>pass(?:word|wd|phrase)?|pwd|secret|key|token|credentials?|contrase[ñn]a)"
UPPER_ANCHOR = r"(?P<word>PASS(?:WORD|WD|PHRASE)?|PWD|SECRET|KEY|TOKEN|CREDENTIALS?|AUTH|PAT)"


def _alternation(words: tuple[str, ...]) -> str:
    """Keywords as one alternation; `pass` and `pwd` only as a whole part of the name."""
    parts = [(r"(?<![a-z0-9])" if w in ("pass", "pwd") else "") + w for w in words]
    return "(?:" + "|".join(sorted(parts, key=len, reverse=True)) + ")"


_PASSWORD_END = re.compile(_alternation(PASSWORD_WORDS) + "$")
_TOKEN_END = re.compile(_alternation(TOKEN_WORDS) + "$")
_ANY_WORD = re.compile(_alternation(PASSWORD_WORDS + TOKEN_WORDS))
_ENV_WORD = re.compile(
    r"(?:^|_)" + _alternation(PASSWORD_WORDS + TOKEN_WORDS).upper()
    + r"(?:_|$)|^(?:PGPASSWORD|REDISCLI_AUTH)$|_PAT$"  # GITHUB_PAT, AZURE_DEVOPS_EXT_PAT
)  # fmt: skip
_ANCHOR = re.compile(ANCHOR)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
_ENV_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def name_before(subject: str, start: int, chars: frozenset[str] = _NAME_CHARS) -> int:
    """Where the name that reaches `start` begins (names are runs of `chars`)."""
    while start > 0 and subject[start - 1] in chars:
        if start >= 2 and subject[start - 2] == "\\" and subject[start - 1] in "nrt":
            break  # a JSON-escaped line break ends the name
        start -= 1
    return start


def name_class(name: str) -> str | None:
    """`password`, `token` or None for a lowercase name, by the keyword it ends with."""
    name = name.replace("-", "_").replace(".", "_")
    if _PASSWORD_END.search(name):
        return "password"
    if _TOKEN_END.search(name):
        return "token"
    return None


Vet = Callable[[str, "re.Match[str]", str], bool]


def ending_vet(password: Callable[[str], bool], token: Callable[[str], bool]) -> Vet:
    """A vet for forms whose name ends with the keyword (`db_pass = '...'`)."""

    def vet(subject: str, match: re.Match[str], value: str) -> bool:
        name = subject[name_before(subject, match.start("word")) : match.end("word")]
        kind = name_class(name)
        return (password if kind == "password" else token)(value) if kind else False

    return vet


def _containing_vet(subject: str, match: re.Match[str], value: str) -> bool:
    """A random value (mixing letters and digits) under a name with a keyword in it, but not
    a tokenizer's (`DIFF_TOKENIZER_ID = "julien-c/dummy-diff-tokenizer"`)."""
    name = subject[name_before(subject, match.start("word")) : match.end("name")]
    if "tokeniz" in name or _ANY_WORD.search(name.replace("-", "_")) is None:
        return False
    return mixed(value) and looks_random(value)


def _env_vet(subject: str, match: re.Match[str], value: str) -> bool:
    name = subject[name_before(subject, match.start("word"), _ENV_CHARS) : match.end("name")]
    if _ENV_WORD.search(name) is None:
        # `ALGOLIA_ADMIN_KEY=<32 hex>`: any `_KEY` name, when the value is a long random run
        return name.endswith("_KEY") and len(value) >= 20 and _random_value(value)
    return secret_value(value) and not re.fullmatch(r"[A-Z][A-Z0-9_]*", value)


def _random_value(value: str) -> bool:
    return secret_value(value) and (random_run(value, hex_digests=True) or looks_random(value))


def _long_mixed(n: int) -> Callable[[str], bool]:
    return lambda v: len(v) >= n and mixed_secret(v)


def rules() -> list[Rule]:
    """Env, code, YAML and INI assignments to secret-sounding names."""
    sep = r"\\?['\"]?\s*(?::|=|:=|=>)\s*\\?['\"]"
    return [
        # `.env` / shell: `DB_PASS=v`, `export X='...'` (a quoted value is redacted whole, so
        # `export AWS_SECRET='aws_secret_access_key = ...'` loses all of it).
        Rule(
            "env_secret",
            re.compile(
                UPPER_ANCHOR + r"(?P<name>[A-Z0-9_]*)="
                r"""(?:'([^'\n\\]{4,300})'|\\?"([^"\n\\]{4,300})\\?\""""
                r"""|([^\s'"`#\\()\[\]{}<>,]{4,})(?=$|[\s'"`#;&|)\\]))"""
            ),
            group=(3, 4, 5),  # 1 and 2 are the anchor and the rest of the name
            vet=_env_vet,
            hints=(*HINTS, "_pat"),
        ),
        # Code and JSON: `password = "literal"`, `"api_key": "literal"`.
        Rule(
            "assigned_secret",
            re.compile(ANCHOR + sep + r"([^'\"\s\\]{4,})\\?['\"]"),
            group=2,
            vet=ending_vet(password_value, _long_mixed(8)),
            hints=HINTS,
            lower=True,
            anchor=_ANCHOR,
        ),
        # A name that only contains a keyword (`client_secret_value`).
        Rule(
            "high_entropy_secret",
            re.compile(
                ANCHOR + r"(?P<name>[a-z0-9_\-]*)" + sep + r"([a-z0-9+/=_\-.~]{20,})\\?['\"]"
            ),
            group=3,
            vet=_containing_vet,
            hints=HINTS,
            lower=True,
            anchor=_ANCHOR,
        ),
        # YAML: `MYSQL_ROOT_PASSWORD: v`, `api_token: v` (unquoted, alone on its line).
        Rule(
            "yaml_secret",
            re.compile(
                ANCHOR + r"[ \t]*:[ \t]+([^\s'\"#,;{}\[\]()\\]+)[ \t]*(?=$|#|\\n|\\r)",
                re.MULTILINE,
            ),
            group=2,
            vet=ending_vet(password_value, _long_mixed(8)),
            hints=HINTS,
            lower=True,
            anchor=_ANCHOR,
        ),
        # INI / credentials files: `aws_secret_access_key = value`, long and mixed.
        Rule(
            "config_secret",
            re.compile(
                ANCHOR
                + r"[ \t]*=[ \t]*([^\s'\"#\\()\[\]{}<>,;]{16,})(?=$|[\s'\"]|\\[nrt])(?![ \t]*[:=])",
                re.MULTILINE,
            ),
            group=2,
            vet=ending_vet(_long_mixed(16), _long_mixed(16)),
            hints=HINTS,
            lower=True,
            anchor=_ANCHOR,
        ),
    ]
