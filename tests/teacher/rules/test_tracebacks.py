"""Tracebacks keep repository frames and the innermost frame; library frames are folded."""

from __future__ import annotations

import re

from builder.teacher.render import render
from builder.teacher.rules import fold_library_frames
from builder.teacher.rules.tracebacks import is_library
from tests.teacher.rules.real import SWE_SMITH, steps_of

FRAME = re.compile(r'^\s*File "([^"]+)", line \d+')


def library_traceback() -> str:
    """The longest real traceback of the SWE-smith sample with site-packages frames."""
    found = [
        s.observation
        for s in steps_of(SWE_SMITH)
        if "Traceback (most recent call last)" in s.observation and "site-packages" in s.observation
    ]
    return max(found, key=len)


def test_library_frames_fold_and_repository_frames_stay() -> None:
    raw = library_traceback()
    out = fold_library_frames(raw, None)
    assert out is not None
    lines = raw.split("\n")
    gone = {n for r in out.ranges for n in range(r.start, r.end + 1)}
    frames = [(n, m.group(1)) for n, line in enumerate(lines, 1) if (m := FRAME.match(line))]
    repo = [n for n, path in frames if not is_library(path)]
    library = [n for n, path in frames if is_library(path)]
    assert repo and len(library) >= 5
    assert not gone & set(repo)  # every repository frame stays
    assert frames[-1][0] not in gone  # the innermost frame stays
    innermost = {frames_of_each[-1] for frames_of_each in _per_traceback(lines)}
    assert set(library) - innermost <= gone  # every other library frame is folded
    assert lines[-1] in render(out, raw).split("\n") or not lines[-1].strip()
    text = render(out, raw)
    assert "(compressed 50 lines: 17 library frames (botocore))" in text
    assert len(text) < len(raw)


def _per_traceback(lines: list[str]) -> list[list[int]]:
    """Frame line numbers of each traceback, read straight from the text."""
    out: list[list[int]] = []
    for n, line in enumerate(lines, 1):
        if line.startswith("Traceback (most recent call last)"):
            out.append([])
        elif FRAME.match(line) and out:
            out[-1].append(n)
    return out


def test_exception_message_lines_are_kept() -> None:
    raw = library_traceback()
    out = fold_library_frames(raw, None)
    assert out is not None
    errors = [
        line for line in raw.split("\n") if re.match(r"^\w+(\.\w+)*(Error|Exception): ", line)
    ]
    assert errors
    text = render(out, raw).split("\n")
    assert all(e in text for e in errors)


def test_not_applicable_without_library_frames() -> None:
    repo_only = (
        "Traceback (most recent call last):\n"
        '  File "/testbed/reproduce.py", line 3, in <module>\n'
        "    main()\n"
        '  File "/testbed/pkg/core.py", line 10, in main\n'
        "    return 1 / 0\n"
        "ZeroDivisionError: division by zero"
    )
    assert fold_library_frames(repo_only, None) is None
    assert fold_library_frames("no traceback here\n" * 20, None) is None


def test_library_paths_are_recognised() -> None:
    assert is_library(
        "/opt/miniconda3/envs/testbed/lib/python3.12/site-packages/botocore/client.py"
    )
    assert is_library("/usr/lib/python3.11/unittest/case.py")
    assert is_library("<frozen importlib._bootstrap>")
    assert not is_library("/testbed/moto/core/responses.py")
