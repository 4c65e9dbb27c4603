"""What bash runs of a line it refuses: the complete commands before the syntax error, then
the error.

bash reads and runs one complete command at a time, and stops at the first syntax error,
whether it reads `-c` or a pipe (SWE-agent and OpenHands keep one shell and write each
action to it): `printf 'echo a\\n[File: x (3 lines)]\\necho b' | bash` prints `a`, then
"syntax error near unexpected token `('" and the refused line, and never runs `echo b`. So
two lines bash refuses at the same point, after the same commands, print the same thing,
whatever follows the error. Weak models send prose and pasted listings as commands: round
12's design pairs (SWE-agent 0.x, Doubao) have two DISCUSSION paragraphs that differ after
an apostrophe ("Let's"), both refused with "unexpected EOF while looking for matching
`''" after `DISCUSSION: command not found`, and two pasted file listings refused at their
identical first line. Before, such a line was its collapsed text, so any wording differed.

bash itself decides (`bash -n`: parse, run nothing), as tree-sitter's error recovery is not
bash's. The refusal is known when bash names the failing line (an unexpected token: that
line; an unterminated quote: the first line from which the text up to there fails the same
way) and the lines before it parse on their own, so they are the commands that ran. No
bash on the machine: no refusal is known and such lines stay text.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache

_LINE = re.compile(r"^bash: -c: line (\d+): (.*)$")
_EOF = "unexpected EOF while looking for matching"
MAX_CHARS = 64_000  # one argv string (MAX_ARG_STRLEN is 128 KiB)
MAX_LINES = 200  # an unterminated quote is searched line by line


def _check(script: str) -> list[tuple[int, str]]:
    """bash's syntax errors of `script` as (line, message); [] when it parses."""
    bash = shutil.which("bash")
    if bash is None:
        return []
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-n", "-c", script],
        executable=bash,
        capture_output=True,
        text=True,
        timeout=10,
        env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    if done.returncode == 0:
        return []
    found = [_LINE.match(line) for line in done.stderr.splitlines()]
    return [(int(m.group(1)), m.group(2)) for m in found if m] or [(0, done.stderr.strip())]


def _ran(lines: list[str], upto: int) -> str | None:
    """The text of the lines before line `upto` (1-based) when it parses whole, else None."""
    before = "\n".join(lines[: upto - 1])
    if before.rstrip().endswith("\\"):
        return None  # a continuation: the refused command started above
    return before if not before.strip() or not _check(before) else None


@lru_cache(maxsize=4096)
def refusal(command: str) -> tuple[str, str] | None:
    """(the text bash ran before refusing `command`, what it printed refusing it), or None
    when bash accepts the line or the refusal is not pinned to one line."""
    if len(command) > MAX_CHARS or "\x00" in command:
        return None
    errors = _check(command)
    if not errors or errors[0][0] == 0:
        return None
    line, message = errors[0]
    lines = command.split("\n")
    if message.startswith(_EOF):
        if len(lines) > MAX_LINES:
            return None
        line = next(
            (j for j in range(1, len(lines) + 1)
             if (seen := _check("\n".join(lines[:j]))) and seen[0][1] == message),
            0,
        )  # fmt: skip
        if not line:
            return None
        shown = message
    else:
        shown = "\n".join(m for _, m in errors[:2])  # the token, then the refused line
    ran = _ran(lines, line)
    return None if ran is None else (ran, shown)
