"""Lines bash refuses: the commands before the syntax error run, then bash stops.

Every pair below is also run through bash itself (harmless commands only, in a temporary
directory), so the similarity's verdict is checked against what bash prints, not against
the rule that produced it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from builder.similarity.refusals import refusal
from schemas.steps import Action

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

# the shape of round 12's design pairs (SWE-agent 0.x prose sent as a command), own wording
PROSE_A = "DISCUSSION\nThe build still fails. Let's look for directories named test."
PROSE_B = "DISCUSSION\nThe build keeps failing. Let's look for files with a given size."
LISTING_A = "[File: /repo/Main.java (9 lines total)]\n1:import java.util.List;\n7:  int a;"
LISTING_B = "[File: /repo/Main.java (9 lines total)]\n1:import java.util.List;\n7:  long b;"


def sh(command: str) -> Action:
    return shell_action(command, command)


def printed(command: str, where: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=where, capture_output=True, text=True, check=False
    )
    return done.stdout + done.stderr


SAME = [
    (PROSE_A, PROSE_B),  # both: DISCUSSION not found, then EOF looking for `'`
    (LISTING_A, LISTING_B),  # both refused at line 1, before the lines that differ
    ("echo start\nfoo ( bar\necho one", "echo start\nfoo ( bar\necho two"),
    ("echo 'left open", "echo 'left open and more words"),
    ('echo "two\nlines"\nLet\'s go', 'echo "two\nlines"\nLet\'s stop'),  # a string ran first
]
DIFFERENT = [
    ("echo one\nLet's go", "echo two\nLet's go"),  # other commands ran first
    ("echo 'open", 'echo "open'),  # another quote is looked for
    ("foo ( bar", "foo ) bar"),  # another unexpected token
    ("[File: a (1 lines total)]", "[File: b (1 lines total)]"),  # bash prints the refused line
    ('echo "two\nlines"\nLet\'s go', 'echo "two\nwords"\nLet\'s go'),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_refused_at_the_same_point_after_the_same_commands_is_the_same(
    a: str, b: str, tmp_path: Path
) -> None:
    assert printed(a, tmp_path) == printed(b, tmp_path)
    assert semantic(sh(a), sh(b)) == 1.0


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_refusals_that_print_differently_are_different(a: str, b: str, tmp_path: Path) -> None:
    assert printed(a, tmp_path) != printed(b, tmp_path)
    assert semantic(sh(a), sh(b)) == 0.0


def test_what_ran_before_the_error_is_kept() -> None:
    assert refusal("echo start\n" + LISTING_A) == (
        "echo start",
        "syntax error near unexpected token `('\n`[File: /repo/Main.java (9 lines total)]'",
    )
    assert refusal(PROSE_A) == ("DISCUSSION", "unexpected EOF while looking for matching `''")


def test_no_refusal_when_bash_accepts_or_the_error_is_not_pinned_to_a_line() -> None:
    assert refusal("echo ok && ls") is None
    # the unclosed quote opens on a line whose command began above: nothing of it ran
    assert refusal('echo "a\nb"; echo \'c\nd') is None
    assert refusal("if true; then\n  echo (\nfi") is None  # the refused `if` began above


def test_a_bash_that_does_not_answer_is_no_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    def hung(*args: object, **kwargs: object) -> None:
        raise subprocess.TimeoutExpired("bash", 10)

    assert refusal("echo 'a\x00b") is None  # bash cannot be given a NUL
    refusal.cache_clear()
    monkeypatch.setattr(subprocess, "run", hung)
    assert refusal("echo 'never checked") is None
    refusal.cache_clear()
