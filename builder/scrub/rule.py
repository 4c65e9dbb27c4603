"""What one detector is (`Rule`) and the value checks the rules share.

A rule finds candidate spans with a regex; its `check` decides whether the value is a literal
secret rather than a reference (`$TOKEN`, `os.environ[...]`), a placeholder, a path or a type
name. The checks are pure functions of the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

PLACEHOLDER = "[REDACTED:{kind}]"

# Tokens only match as whole words (hyphen and underscore count as word characters). The right
# boundary is a lookahead; the left one is checked in code (`Rule.bounded`), because a leading
# lookbehind stops `re` from jumping to the literal prefix and makes each scan ~30x slower.
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
RIGHT_BOUNDARY = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector: `group` is the part of the match replaced; `check` vets the match.

    `vet`, if set, also sees the match and the text it ran on (the lowercased text for `lower`
    rules), for rules that must read a name before the value.
    `group` may be a tuple: the first of those groups that took part in the match is replaced
    (for rules with alternatives, e.g. a quoted or an unquoted value).
    `hints` are lowercase substrings one of which every match contains: when none is in the
    text, the regex is not run (a substring search is far cheaper than a regex scan).
    `lower` rules are written in lowercase and run on the lowercased text: case-insensitive
    matching that way is about ten times faster than with `re.IGNORECASE`.
    """

    kind: str
    regex: re.Pattern[str]
    group: int | tuple[int, ...] = 0
    check: Callable[[str], bool] | None = None
    hints: tuple[str, ...] = ()
    lower: bool = False
    bounded: bool = False  # the match must not follow a word character
    # (subject, match, value) -> keep?; for checks that need the text around the value
    vet: Callable[[str, re.Match[str], str], bool] | None = None
    # Rules sharing an anchor regex (their own regex starts with it) are only tried where the
    # anchor matched: one scan of the text for several rules.
    anchor: re.Pattern[str] | None = None
    # Where a match may start, found more cheaply than by the regex scanning every position
    # (the regex is then only tried there, with `match`): for rules whose regex has no
    # literal to jump to, such as a family of prefixes.
    starts: Callable[[str], Iterable[int]] | None = None

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        """The span of the replaced group; (-1, -1) when none of the groups took part."""
        groups = self.group if isinstance(self.group, tuple) else (self.group,)
        for group in groups:
            start, end = match.span(group)
            if start >= 0:
                return start, end
        return -1, -1


def not_secret(value: str) -> bool:
    """A value every rule lets be: a key public by design, or one vendors print in their
    documentation (`AKIAIOSFODNN7EXAMPLE`): no issued credential spells EXAMPLE."""
    return "EXAMPLE" in value or value.startswith(PUBLIC_PREFIXES)


def follows_word(text: str, index: int) -> bool:
    """Whether `text[index]` follows a word character; the `n` of a JSON-escaped newline
    (`\\n`, as in tool-call arguments) is a line break, not a letter."""
    if index == 0 or text[index - 1] not in WORD_CHARS:
        return False
    return not (index >= 2 and text[index - 2] == "\\" and text[index - 1] in "nrt")


def token(kind: str, pattern: re.Pattern[str] | str, **kwargs: Any) -> Rule:
    """A rule matching `pattern` as a whole word."""
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags = pattern.flags & re.IGNORECASE if isinstance(pattern, re.Pattern) else 0
    return Rule(kind, re.compile(f"(?:{text}){RIGHT_BOUNDARY}", flags), bounded=True, **kwargs)


def mixed(value: str) -> bool:
    """Random tokens mix letters and digits; identifiers and words rarely do."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def mixed_case(value: str) -> bool:
    return mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


PLACEHOLDER_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "changeme",
        "redacted", "undefined", "password", "secret", "token", "required", "optional",
        "string", "example", "your-password", "your_password", "xxx", "value",
    }
)  # fmt: skip
# Words of made-up values: `SECRET_KEY='test-secret-key'`, `'fake-key'`, `'dummy'`,
# `'PASSWORD': 'test_password'` are settings an agent writes for a test run, not credentials
# (1,329 such values were redacted in 396 SWE-agent runs of SWE-bench Django tasks). A value
# made only of these words, split at `-`, `_`, `.` and spaces, is a placeholder.
_PLACEHOLDER_WORDS = frozenset(
    {
        "test", "testing", "tests", "fake", "dummy", "mock", "example", "sample", "demo",
        "placeholder", "insecure", "secret", "key", "password", "passwd", "pass", "token",
        "my", "your", "a", "the", "for", "only", "not", "do", "use", "in", "production",
        "change", "me", "changeme", "dev", "development", "local", "django", "validation",
        "xxx", "foo", "bar", "baz", "value", "here", "some", "unit", "tmp", "temp",
    }
)  # fmt: skip
_WORD_SEPARATORS = re.compile(r"[-_. ]+")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# `--password PASSWORD`, `password: str`, `SecretStr`, `getPassword`: words and names, while a
# random mix of cases (`riXUTdSZZq`) is a password
_METAVAR = re.compile(r"[A-Z][A-Z0-9_\-]*|[a-z]+|(?:[A-Z][a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+")


# Keys that are public by design (Stripe publishable keys, Mapbox public tokens).
PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "pk.eyJ")


def secret_value(value: str) -> bool:
    """An assigned value that is a literal secret, not a reference, placeholder, path or URL."""
    value = value.strip()
    if not value or value.lower() in PLACEHOLDER_VALUES or value[0] in "$%{<[(/.*~!|>&@`":
        return False
    if all(w in _PLACEHOLDER_WORDS for w in _WORD_SEPARATORS.split(value.lower()) if w):
        return False
    if value.startswith(PUBLIC_PREFIXES):
        return False
    if "://" in value or "..." in value or "…" in value or _DOTTED_NAME.fullmatch(value):
        return False  # a URL, an elided example (`sk-...`), a dotted name
    if value.startswith(("os.environ", "os.getenv", "process.env", "env(", "getenv(")):
        return False
    return not set(value) <= {"x", "X", "*", "-", "_", ".", "•"}


def password_value(value: str) -> bool:
    """A literal after a password-like name: any non-placeholder, but not a bare word.

    Passwords are often short words with a digit (`hunter2`), so no entropy test; a bare word
    of letters (`SecretStr`, `PASSWORD`, `string`) is a type name or a metavar, not a password.
    """
    return len(value) >= 4 and secret_value(value) and not _METAVAR.fullmatch(value)


def cli_value(value: str) -> bool:
    """A flag's value: not the next flag and not an upper-case metavar (`--token TOKEN`)."""
    return (
        len(value) >= 4
        and not value.startswith("-")
        and secret_value(value)
        and not re.fullmatch(r"[A-Z][A-Z0-9_\-]*", value)
    )


_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def mixed_secret(value: str) -> bool:
    """A literal that mixes letters and digits (long tokens, keys), not a snake_case name
    (`access_key, secret_key = s3_example_simple`)."""
    return secret_value(value) and mixed(value) and not _SNAKE_CASE.fullmatch(value)
