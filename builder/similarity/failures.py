"""What a script's traceback in the log proves about other scripts: the same statements up to
where it stopped print the same.

A script whose run ends in an exception raised by a top-level statement has printed what the
statements before it print, then the traceback. Any script whose top-level statements are the
same up to and including that one does exactly the same (`test_fix.py` and `test_migration.py`
of django-15380, written by the agent with the same settings and model and then different
checks, both stop at line 27 on `class MyModel`'s RuntimeError; a round 10 design pair). Only
the file name in the traceback differs. A statement inside `try` or `with` at the top level is
not used: its handler could print and go on.
"""

from __future__ import annotations

import ast
import hashlib
import posixpath
import re

_TRACEBACK = re.compile(
    r"Traceback \(most recent call last\):\n[ \t]*File \"([^\"\n]+)\", line (\d+), in <module>\n"
)
_GOES_ON = (ast.Try, ast.With, ast.AsyncWith, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def prefix_digests(text: str) -> tuple[str, ...]:
    """A digest of the first k top-level statements, for every k (syntax trees: comments and
    spacing do not count); () when the text does not parse."""
    spans = _statements(text)
    return tuple(digest for _, _, digest in spans)


def _statements(text: str) -> list[tuple[ast.stmt, int, str]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    running = hashlib.sha256()
    out = []
    for statement in tree.body:
        running.update(ast.dump(statement, include_attributes=False).encode("utf-8") + b"\0")
        out.append((statement, statement.end_lineno or statement.lineno, running.hexdigest()[:16]))
    return out


def failed_prefix(path: str, text: str, observation: str) -> str | None:
    """The digest of `path`'s statements up to the one its run stopped at, when `observation`
    holds exactly one traceback and its outermost frame is a top-level statement of that file
    (not one inside `try`/`with`); None else."""
    observation = observation.replace("\r\n", "\n")  # terminals log CRLF (SWE-agent)
    frames = list(_TRACEBACK.finditer(observation))
    if len(frames) != 1 or observation.count("Traceback (most recent call last):") != 1:
        return None
    where, line = frames[0].group(1), int(frames[0].group(2))
    if posixpath.basename(where) != posixpath.basename(path):
        return None
    for statement, end, digest in _statements(text):
        if statement.lineno <= line <= end:
            return None if isinstance(statement, _GOES_ON) else digest
    return None
