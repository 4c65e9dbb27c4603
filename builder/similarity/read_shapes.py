"""Which reads the log's outputs can settle, and plain-text patterns (`shown`).

A read is settled only in shapes whose output is the file's lines or lines of it: one grep of
one file with options that do not change which lines print (`-i`, `-E`, `-F`), `sed -n
'/S/,/E/p'` of one file, and a read with no script, option or stage that changes the lines
(`cat`, `sed -n 'a,bp'`, `head`, `tail`, an editor's view). A pattern is read as text only
when it has no regex operator: a BRE with no `.`, `*`, `[`, `$` or backslash class, an ERE
with none of `+?(){}|^` either, or any `-F` pattern; a leading `^` anchors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from builder.similarity.records import WHOLE, LineRange, Unit

_PLAIN = (None, frozenset(), None, (), ())
_GREP_FLAGS = frozenset({"-i", "-E", "-F"})
_RANGE = re.compile(r"^/((?:[^/\\]|\\.)+)/,/((?:[^/\\]|\\.)+)/p$")
_ERE_OPS = frozenset("+?(){}|")
NUMBERED = re.compile(r"^\s*\d+(\t|[:-]|  )")  # cat -n, nl, grep -n prefixes


def grep_of(unit: Unit) -> tuple[str, frozenset[str], str] | None:
    """(file, flags, pattern) of a one-command grep of one file with options `_GREP_FLAGS`."""
    if unit.kind != "search" or len(unit.key) != 1 or not isinstance(unit.key[0], tuple):
        return None
    key = unit.key[0]
    if len(key) != 6 or key[:2] != ("search", "grep") or key[5] != ():
        return None
    patterns, flags, paths = key[2], key[3], key[4]
    if not isinstance(flags, frozenset) or not flags <= _GREP_FLAGS:
        return None
    if len(patterns) != 1 or len(paths) != 1:
        return None
    return str(paths[0]), flags, str(patterns[0])


def sed_range_of(unit: Unit) -> tuple[str, str, str] | None:
    """(file, start pattern, end pattern) of `sed -n '/S/,/E/p' F` showing all it prints."""
    key = unit.key
    if unit.kind != "read" or len(key) != 8 or key[0] != "read":
        return None
    if unit.view not in (None, (WHOLE,)):
        return None
    if len(key[1]) != 1 or len(key[2]) != 1 or key[3:] != (None, frozenset(), None, (), ()):
        return None
    found = _RANGE.match(str(key[2][0]))
    return (str(key[1][0]), found[1], found[2]) if found else None


def plain_read_of(unit: Unit) -> tuple[str, tuple[LineRange, ...]] | None:
    """(file, lines shown) of a read of one file with no script or option that changes it."""
    key = unit.key
    if unit.kind != "read" or len(key) != 8 or key[0] != "read" or key[2] != ():
        return None
    if len(key[1]) != 1 or key[3:] != _PLAIN:
        return None
    return str(key[1][0]), unit.view or (WHOLE,)


def bounded(view: LineRange) -> bool:
    return view.start > 0 and view.end is not None and view.end >= view.start


def literal(pattern: str, flags: Iterable[str] = ()) -> tuple[str, bool] | None:
    """(text, anchored at the line start) of a pattern that matches only that text; None for a
    pattern with regex operators."""
    options = set(flags)
    if "-F" in options:
        return (pattern, False) if "\n" not in pattern else None
    anchored = pattern.startswith("^")
    body, out, i = pattern[anchored:], [], 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if i + 1 >= len(body) or body[i + 1].isalnum() or body[i + 1] in "()|{}+?<>`'":
                return None  # `\w`, `\(`, `\|`: operators
            out.append(body[i + 1])
            i += 2
            continue
        if char in ".*[$" or ("-E" in options and (char in _ERE_OPS or char == "^")):
            return None
        out.append(char)
        i += 1
    return "".join(out), anchored


def matches(line: str, lit: tuple[str, bool], fold: bool) -> bool:
    text, anchored = lit
    if fold:
        line, text = line.lower(), text.lower()
    return line.startswith(text) if anchored else text in line


def narrower(inner: tuple[str, bool], outer: tuple[str, bool], fold: bool) -> bool:
    """Whether every line `inner` matches is matched by `outer`."""
    a, b = (inner[0].lower(), outer[0].lower()) if fold else (inner[0], outer[0])
    if outer[1]:
        return inner[1] and a.startswith(b)
    return b in a
