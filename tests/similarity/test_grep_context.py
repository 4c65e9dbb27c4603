"""grep context: the window of lines around each match is a view, compared like reads."""

from __future__ import annotations

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from schemas.steps import Action


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


@pytest.mark.parametrize(
    ("a", "b", "score"),
    [
        # django-15103 (a held-out pair of round 1): 20 vs 15 lines after it, 16 of 21 shared
        (
            'cat django/utils/html.py | grep -n "def json_script" -A 20',
            'grep -n "def json_script" -A 15 django/utils/html.py',
            16 / 21,
        ),
        ('grep -n "def f" -C 10 a.py', 'grep -n "def f" -B 10 -A 8 a.py', 19 / 21),
        ('grep -n "def f" -A 20 a.py', 'grep -n "def f" -A 5 a.py', 6 / 21),
        ('grep -n "def f" -A 20 a.py', 'grep -n "def f" a.py', 1 / 21),
    ],
)
def test_the_overlap_of_the_windows(a: str, b: str, score: float) -> None:
    assert semantic(sh(a), sh(b)) == pytest.approx(score, abs=1e-6)
    assert semantic(sh(b), sh(a)) == pytest.approx(score, abs=1e-6)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('grep -n "def f" -A 20 a.py', 'grep -n "def g" -A 15 a.py'),  # another pattern
        ('grep -n "def f" -A 20 a.py', 'grep -n "def f" -A 15 b.py'),  # another file
        ('grep -n "def f" -A 20 a.py', 'grep -in "def f" -A 15 a.py'),  # another option
        ('grep -n "def f" -A 20 a.py | wc -l', 'grep -n "def f" -A 18 a.py | wc -l'),  # a count
        ('grep -rn "def f" -A 20 .', 'grep -rn "def f" -A 18 . | head -5'),  # cut by head
        ("git diff | grep -A 20 def", "git log -p | grep -A 18 def"),  # another input
    ],
)
def test_anything_else_that_differs_keeps_them_apart(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 0.0
