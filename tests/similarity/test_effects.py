"""Repeated mkdir/touch/rm in one line: dropped only when nothing between could undo or
depend on the first one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from schemas.steps import Action

ROWS = {
    row["key"]: row
    for row in map(json.loads, (Path(__file__).parent / "near_misses" / "pairs.jsonl").open())
}


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


@pytest.mark.parametrize("key", ["3d63227d36b2e11f", "6d50d2b46fbb2e3c"])
def test_the_real_repeats_are_the_same_action(key: str) -> None:
    row = ROWS[key]
    assert row["same"], row["reason"]
    assert semantic(sh(row["a"]["command"]), sh(row["b"]["command"])) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("mkdir app && touch app/x.py", "mkdir app\ntouch app/x.py\nmkdir -p app\ntouch app/x.py"),
        ("rm a.py b.py", "rm a.py b.py && rm b.py"),
        ("rm -f a.py", "rm -f a.py; rm -f a.py"),
    ],
)
def test_a_repeat_of_what_the_line_already_did(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # removed in between: the second mkdir makes it again
        ("mkdir app", "mkdir app && rm -r app && mkdir app"),
        # a script between may have deleted or read it
        ("touch a && python x.py", "touch a && python x.py && touch a"),
        ("rm a.py", "rm a.py && python gen.py && rm a.py"),
        # written again in between: the second rm removes the new file
        ("rm a.txt && echo x > a.txt", "rm a.txt && echo x > a.txt && rm a.txt"),
        # not a repeat: another path, or more paths
        ("mkdir app", "mkdir app && mkdir app2"),
        ("rm a.py", "rm a.py && rm a.py b.py"),
    ],
)
def test_a_repeat_after_something_that_may_undo_it_counts(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 0.0
