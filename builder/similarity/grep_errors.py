"""The error GNU grep stops on when a pattern does not compile, for the patterns where it is
certain.

Such a grep searches nothing: it prints one line (`grep: Unmatched ) or \\)`) and exits 2,
whatever the files, the other options or the rest of the pattern. Two greps that stop on the
same error give the agent the same information (django-13346 under GPT-5-mini, round 9:
`grep -R "\\.only(\\"pk\\"\\)" -n ..` vs `grep -R "\\.only(\\'pk\\'\\)" -n`, both BRE patterns
with a stray `\\)`). The messages are GNU grep 3.8's, checked against the real program in
`tests/similarity/test_grep_errors.py`. Precision first: a pattern with anything this parser
does not model exactly (intervals, collating elements, ranges) gets None, never a guess.
"""

from __future__ import annotations

TRAILING = "Trailing backslash"
UNMATCHED_OPEN = "Unmatched ( or \\("
UNMATCHED_CLOSE = "Unmatched ) or \\)"
BACK_REFERENCE = "Invalid back reference"
_CLASSES = frozenset(
    {"alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "print", "graph"}
    | {"cntrl", "xdigit"}
)


class _Unsure(Exception):
    """A construct this parser does not model: no claim is made about the pattern."""


def _bracket_end(pattern: str, i: int) -> int:
    """The index just past the bracket expression opening at `pattern[i] == '['`."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a leading ']' is a member
    while j < len(pattern):
        c = pattern[j]
        if c == "]":
            return j + 1
        if c == "[" and j + 1 < len(pattern) and pattern[j + 1] in ":.=":
            if pattern[j + 1] != ":":
                raise _Unsure  # collating elements and equivalence classes
            end = pattern.find(":]", j + 2)
            if end < 0 or pattern[j + 2 : end] not in _CLASSES:
                raise _Unsure
            j = end + 2
            continue
        if c == "-" and pattern[j + 1 : j + 2] not in ("]", ""):
            raise _Unsure  # ranges depend on the locale's collation
        j += 1
    raise _Unsure  # unterminated: grep's message depends on where


def _scan(pattern: str, ere: bool) -> str | None:
    opened = 0
    closed = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            if pattern.startswith(("[:", "[.", "[="), i):
                raise _Unsure  # `[:space:]` outside a bracket has its own message
            i = _bracket_end(pattern, i)
            continue
        if c == "{" and ere:
            raise _Unsure  # intervals
        if c == "\\":
            if i + 1 == len(pattern):
                return TRAILING
            d = pattern[i + 1]
            i += 2
            if d == "{" and not ere:
                raise _Unsure
            if d.isdigit() and d != "0":
                if int(d) > closed:
                    return BACK_REFERENCE
            elif not ere and d == "(":
                opened += 1
            elif not ere and d == ")":
                if opened == 0:
                    return UNMATCHED_CLOSE
                opened, closed = opened - 1, closed + 1
            continue
        if ere and c == "(":
            opened += 1
        elif ere and c == ")" and opened:
            opened, closed = opened - 1, closed + 1  # an unmatched ')' is a literal in ERE
        i += 1
    return UNMATCHED_OPEN if opened else None


def compile_error(pattern: str, ere: bool) -> str | None:
    """GNU grep's message for a pattern that cannot compile (basic syntax, or extended with
    `ere`); None when it compiles or when this parser cannot be sure."""
    try:
        return _scan(pattern, ere)
    except _Unsure:
        return None
