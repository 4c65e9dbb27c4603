"""SWE-agent's `open F N` / `goto N` window, checked against what real logs show it printing."""

from __future__ import annotations

import json
import re

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from builder.similarity.swe_commands import window_at
from schemas.steps import Action
from tests.paths import SHARED

LOGS = SHARED / "swe-agent"
_OPEN = re.compile(r"^open (\S+) (\d+)$")


def bash(command: str) -> Action:
    return shell_action(command, command)


def logged_opens() -> list[tuple[str, str, int, int, int]]:
    """(log, file, asked line, first and last line shown) of every `open F N` in the logs."""
    out = []
    for path in sorted(LOGS.glob("*.traj")):
        for step in json.loads(path.read_text())["trajectory"]:
            match = _OPEN.match(step["action"].strip())
            if match is None:
                continue
            shown = [int(n) for n in re.findall(r"^(\d+):", step["observation"], re.M)]
            file = match.group(1).strip("\"'")
            out.append((path.name, file, int(match.group(2)), shown[0], shown[-1]))
    return out


def test_the_logs_have_opens_to_check() -> None:
    assert {log for log, *_ in logged_opens()} == {
        "marshmallow-code__marshmallow-1867.traj",
        "pydicom__pydicom-1458.traj",
    }


@pytest.mark.parametrize(("log", "file", "line", "first", "last"), logged_opens())
def test_an_open_reads_the_lines_its_log_shows(
    log: str, file: str, line: int, first: int, last: int
) -> None:
    """marshmallow-1867 shows 1457-1556 for `open fields.py 1474`; pydicom-1458 shows 273-372
    for `open numpy_handler.py 293` (372 lines: the window stops at the end). A window centred
    on the asked line (1424-1524, 243-343) shares about half of those lines."""
    logged = bash(f"sed -n '{first},{last}p' {file}")
    assert semantic(bash(f"open {file} {line}"), logged) >= 0.9
    window = window_at(line)
    assert window.start <= line <= window.end


def test_the_window_never_starts_above_the_first_line() -> None:
    top = bash("open src/a.py")
    for line in (1, 9, 16):
        assert semantic(top, bash(f"open src/a.py {line}")) == 1.0
    assert semantic(bash("goto 1"), bash("goto 16")) == 1.0
    assert semantic(bash("goto 1"), bash("goto 17")) < 1.0


def test_windows_far_apart_are_different_reads() -> None:
    assert semantic(bash("open src/a.py 1474"), bash("open src/a.py 1074")) == 0.0
    assert semantic(bash("goto 100"), bash("goto 160")) < 0.75
