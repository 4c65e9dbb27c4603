"""Test-run outputs (pytest, unittest, Django's runtests / manage.py test, tox): keep what failed.

A failing run's value is in its failures, errors, tracebacks and the summary lines; a passing
run's is in the summary alone. What the agent does not need is the noise around them: passing
tests (verbose `PASSED` / `... ok` lines, progress lines of dots), pytest's session header,
test-database setup lines and runs of warning lines.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from builder.teacher.output import CompressorOutput
from builder.teacher.rules.base import Span, fold, listed, runs, units
from schemas.steps import Action

TEST_VERBS = frozenset({"pytest", "py.test", "tox", "nox", "unittest", "nosetests", "trial"})
TEST_SCRIPTS = frozenset({"runtests.py", "manage.py"})

_SHAPE = re.compile(
    r"^=+ test session starts =+$"
    r"|^Ran \d+ tests? in [\d.]+s$"
    r"|^=+ .*\b(passed|failed|errors?)\b.* in [\d.]+s",
    re.MULTILINE,
)
_VERBOSE_PASS = re.compile(r"::\S.* (PASSED|SKIPPED|XFAIL|XPASS)\b|^\S.* \.\.\. (ok|skipped\b.*)$")
_PROGRESS = re.compile(r"^(\S+\.py )?[.sx]+\s*(\[\s*\d+%\])?$")
_DATABASE = re.compile(r"^(Creating|Cloning|Destroying) test database for alias ")
_HEADER = re.compile(r"^(platform |cachedir: |rootdir: |configfile: |plugins: |testpaths: )")
_WARNING = re.compile(r"\b(\w*Warning)\b:")


def is_test_command(action: Action | None) -> bool:
    """True when the command runs a test suite (pytest, tox, unittest, runtests.py, ...)."""
    for unit in units(action):
        if unit.verb in TEST_VERBS:
            return True
        if any(PurePosixPath(f).name in TEST_SCRIPTS for f in unit.files) and (
            "test" in unit.patterns
            or any(PurePosixPath(f).name == "runtests.py" for f in unit.files)
        ):
            return True
        if unit.verb == "make" and "test" in unit.patterns:
            return True
    return False


def looks_like_test_run(raw: str) -> bool:
    """True when the text has a pytest session banner or summary, or unittest's `Ran N tests`."""
    return _SHAPE.search(raw) is not None


def fold_passing_tests(raw: str, action: Action | None = None) -> CompressorOutput | None:
    """Keep failures, errors, tracebacks and the summary of a test run; fold passing-test
    lines, dot-only progress lines, the pytest session header, test-database setup lines and
    runs of warning lines. Applies when the command runs tests or the output has a test
    runner's banner/summary; not applicable when nothing of that noise is there."""
    if not (is_test_command(action) or looks_like_test_run(raw)):
        return None
    lines = raw.split("\n")
    kinds = [_noise_kind(line) for line in lines]
    spans = []
    for start, end in runs([k is not None for k in kinds]):
        spans.append(Span(start, end, _summary(lines[start - 1 : end], kinds[start - 1 : end])))
    return fold(raw, spans)


def _noise_kind(line: str) -> str | None:
    stripped = line.strip()
    if not stripped:
        return None
    if _VERBOSE_PASS.search(stripped):
        return "passed"
    if _PROGRESS.match(stripped) and "." in stripped:
        return "progress"
    if _DATABASE.match(stripped):
        return "database"
    if _HEADER.match(stripped):
        return "header"
    if _WARNING.search(stripped) and line[:1].isspace():
        return "warning"
    return None


def _summary(lines: list[str], kinds: list[str | None]) -> str:
    counts = Counter(k for k in kinds if k is not None)
    parts = []
    if counts["passed"]:
        parts.append(f"{counts['passed']} passing tests")
    if counts["progress"]:
        dots = sum(
            _progress_marks(line).count(".")
            for line, k in zip(lines, kinds, strict=True)
            if k == "progress"
        )
        parts.append(f"progress of {dots} passing tests")
    if counts["header"]:
        parts.append("test session header")
    if counts["database"]:
        parts.append("test database setup/teardown")
    if counts["warning"]:
        names = [m.group(1) for line in lines for m in [_WARNING.search(line)] if m]
        parts.append(f"{counts['warning']} warnings ({listed(names)})")
    return "; ".join(parts)


def _progress_marks(line: str) -> str:
    words = line.strip().split()
    marks = [w for w in words if set(w) <= set(".sx")]
    return "".join(marks)
