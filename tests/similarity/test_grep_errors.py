"""A grep whose pattern cannot compile searches nothing and prints one error line: two such
greps are the same action when the error is. The parser's claims are checked against the real
GNU grep on this machine, over hand-picked patterns and every grep pattern of the committed
near-miss pairs, so a claim grep would not make fails here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.argv import flags_of
from builder.similarity.bashparse import split_commands
from builder.similarity.compare import semantic
from builder.similarity.grep_errors import compile_error

NEAR_MISSES = Path(__file__).parent / "near_misses"
BROKEN = [  # (pattern, extended): grep 3.8 refuses each
    (r"a\)", False),
    (r"\(a", False),
    ("(a", True),
    (r"\.only(\"pk\"\)", False),
    (r"\.only(\"pk\"\)", True),
    ("a\\", False),
    ("a\\", True),
    (r"\1", False),
    (r"\(a\1\)", False),
    (r"\(a\)\1", True),
    (r"a\|b\)", False),
    (r"def \(foo\|bar", False),
    (r"[)]\)", False),
    (r"x[[:space:]](", True),
]
FINE = [  # (pattern, extended): grep 3.8 compiles each
    ("a)", True),
    ("(a))", False),
    (r"\(a\)\1", False),
    ("[]a]", True),
    ("[^]a](", False),
    (r"[\]", True),
    (r"a\\", False),
    (r"\(\)", True),
    ("[[:alpha:]_]+(", False),
    (r"def \w\+(", False),
]
ODD = ["a[", "[a", "[:space:]", "a\\{1", "a{2,1}", "[b-a]", "[[:foo:]]", "[[.a.]]"]


def _grep_patterns() -> set[str]:
    """Every pattern of a plain grep in the committed near-miss pairs."""
    found: set[str] = set()
    for path in sorted(NEAR_MISSES.glob("pairs*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for side in (row["a"], row["b"]):
                found.update(_patterns_of(side.get("command") or ""))
    return found


def _patterns_of(command: str) -> list[str]:
    out = []
    for cmd in split_commands(command):
        if cmd.name != "grep":
            continue
        flags, positional = flags_of("grep", cmd.args, cmd.cwd)
        given = [f.split("=", 1)[1] for f in flags if f.startswith("-e=")]
        out += given or positional[:1]
    return out


def _real(pattern: str, extended: bool) -> tuple[int, str]:
    argv = ["grep", *(["-E"] if extended else []), "-e", pattern, "/dev/null"]
    done = subprocess.run(argv, capture_output=True, text=True, env={"LC_ALL": "C.UTF-8"})
    return done.returncode, done.stderr


def _gnu_grep() -> bool:
    if shutil.which("grep") is None:
        return False
    done = subprocess.run(["grep", "--version"], capture_output=True, text=True)
    return done.stdout.startswith("grep (GNU grep)")


needs_grep = pytest.mark.skipif(not _gnu_grep(), reason="GNU grep not installed (its messages)")


@needs_grep
@pytest.mark.parametrize(("pattern", "extended"), BROKEN)
def test_each_claimed_error_is_the_line_real_grep_prints(pattern: str, extended: bool) -> None:
    message = compile_error(pattern, extended)
    assert message is not None
    assert _real(pattern, extended) == (2, f"grep: {message}\n")


@needs_grep
@pytest.mark.parametrize(("pattern", "extended"), FINE)
def test_a_pattern_that_compiles_gets_no_claim(pattern: str, extended: bool) -> None:
    assert _real(pattern, extended) == (1, "")
    assert compile_error(pattern, extended) is None


@pytest.mark.parametrize("pattern", ODD)
def test_what_the_parser_does_not_model_gets_no_claim(pattern: str) -> None:
    # grep refuses most of these, with messages that depend on where and how: no guess
    assert compile_error(pattern, False) is None
    assert compile_error(pattern, True) is None


@needs_grep
def test_no_claim_on_a_real_near_miss_pattern_that_real_grep_does_not_make() -> None:
    patterns = _grep_patterns()
    assert len(patterns) > 100
    claims = 0
    for pattern in patterns:
        for extended in (False, True):
            message = compile_error(pattern, extended)
            code, err = _real(pattern, extended)
            if message is not None:
                claims += 1
                assert (code, err) == (2, f"grep: {message}\n"), pattern
            elif code == 2:
                assert "Unmatched ( or" not in err and "Unmatched ) or" not in err, pattern
    assert claims >= 1


def score(a: str, b: str) -> float:
    x, y = shell_action(a, raw=a), shell_action(b, raw=b)
    assert semantic(x, y) == semantic(y, x)
    return semantic(x, y)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # round 9 design: the quote inside the pattern and the search root differ, both stop
        (r'grep -R "\.only(\"pk\"\)" -n .. || true', r"grep -R '\.only(.pk.\))' -n || true"),
        (r"grep -rn 'def render(self\)' src", r"grep -rn 'class Render\)' tests docs"),
        (r"grep -E '(foo|bar' a.py | head", r"egrep 'baz(' b.py | head"),
    ],
)
def test_two_greps_stopped_by_one_compile_error_are_the_same_search(a: str, b: str) -> None:
    assert score(a, b) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (r"grep -rn 'render(self\)' src", r"grep -rn 'render\(self' src"),  # ) vs ( message
        (r"grep -rn 'render(self\)' src", r"grep -rn 'render(self)' src"),  # second compiles
        (r"grep -rn 'render(self\)' src", r"grep -rnE 'render(self\)' src"),  # ERE: literal )
        (r"grep -rnF 'render(self\)' src", r"grep -rnF 'render\)' src"),  # fixed strings
        (r"git grep -n 'render(self\)' src", r"git grep -n 'render\)' tests"),  # echoes pattern
        (r"grep -rn 'a\)' src | wc -l", r"grep -rn 'b\)' src"),  # the pipeline differs
    ],
)
def test_searches_that_run_or_fail_differently_stay_different(a: str, b: str) -> None:
    assert score(a, b) < 0.75
