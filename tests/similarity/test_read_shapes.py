"""The shapes of read the log's outputs can settle (`builder.similarity.read_shapes`)."""

from __future__ import annotations

from builder.ingest.formats.base import shell_action
from builder.similarity.actions import action_units
from builder.similarity.read_shapes import grep_of, literal, plain_read_of, sed_range_of
from builder.similarity.records import LineRange


def _unit(command: str):
    (unit,) = action_units(shell_action(command, raw=command, tool="bash"))
    return unit


def test_literal_reads_only_plain_text() -> None:
    assert literal(r"parts\[0\] == 'return'") == ("parts[0] == 'return'", False)
    assert literal("^class A") == ("class A", True)
    assert literal("a.b") is None and literal("a*") is None and literal(r"\w+") is None
    assert literal("a|b") == ("a|b", False) and literal("a|b", {"-E"}) is None
    assert literal("a.b", {"-F"}) == ("a.b", False)


def test_only_reads_whose_output_is_the_files_lines() -> None:
    assert grep_of(_unit('grep -in "x" a.py')) == ("a.py", frozenset({"-i"}), "x")
    assert grep_of(_unit("grep -c x a.py")) is None  # counts, not lines
    assert grep_of(_unit("grep -w x a.py")) is None  # a word match is not a substring match
    assert grep_of(_unit("grep x a.py b.py")) is None  # file-name prefixes
    assert sed_range_of(_unit("sed -n '/class A/,/return/p' a.py")) == ("a.py", "class A", "return")
    assert sed_range_of(_unit("sed -n '/class A/,/return/p' a.py | head -3")) is None
    assert plain_read_of(_unit("sed -n '10,20p' a.py")) == ("a.py", (LineRange(10, 20),))
    assert plain_read_of(_unit("tail -n 5 a.py")) == ("a.py", (LineRange(-5, None),))
    assert plain_read_of(_unit("cat a.py b.py")) is None
    assert plain_read_of(_unit("sed -n '5,9l' a.py")) is None  # `l` shows escapes
