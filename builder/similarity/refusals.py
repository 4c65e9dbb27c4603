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
line; an unclosed quote: the line it opens on, bash 5) and the lines before it parse on
their own, so they are the commands that ran; else (a refused command that began on an
earlier line) no claim is made. No
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


def _check(script: str) -> list[tuple[int, str]]:
    """bash's syntax errors of `script` as (line, message); [] when it parses."""
    bash = shutil.which("bash")
    if bash is None:
        return [(0, "not checked")]  # no line named: no claim
    try:
        done = subprocess.run(
            ["bash", "--norc", "--noprofile", "-n", "-c", script],
            executable=bash,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=10,
            env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):  # unencodable text, a hung bash
        return [(0, "not checked")]  # no line named: no claim
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
    # bash names the line a refused command starts on for an unclosed quote (the line it
    # opens on), the refused line for an unexpected token, which it also prints
    shown = message if message.startswith(_EOF) else "\n".join(m for _, m in errors[:2])
    ran = _ran(command.split("\n"), line)
    return None if ran is None else (ran, shown)
