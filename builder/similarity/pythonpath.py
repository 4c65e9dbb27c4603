"""`PYTHONPATH` in one spelling, and left out where it changes nothing.

Spelling: its entries in order, each once, `./` and an empty entry (which Python reads as
the working directory) as `.`, and the inherited `$PYTHONPATH` left out (both sides of a
comparison inherit the same one): `PYTHONPATH=.` and `export PYTHONPATH=$PYTHONPATH:.` set
the same path (django-15554, round 3 design pair 552f2878850e87f9).

No-op: the working directory alone, where Python puts it first on `sys.path` anyway: for
`python -c` and `python -m` (the working directory) and a script in it (the script's
directory; the `sys.path` documentation, "The initialization of the sys.path module search
path"): `PYTHONPATH=. python3 reproduce_issue.py` imports what `python3 reproduce_issue.py`
does (django-14672). For `pytest`, `django-admin` (console scripts in bin/) or
`tests/runtests.py` it is what makes the checkout importable, and is kept.
"""

from __future__ import annotations

from builder.similarity.bashparse import SimpleCommand
from builder.similarity.normalize import program

_INHERITED = frozenset({"$PYTHONPATH", "${PYTHONPATH}"})


def python_path(value: str) -> str:
    """A `PYTHONPATH` value in one spelling."""
    entries: list[str] = []
    for entry in value.split(":"):
        if entry in _INHERITED:
            continue
        entry = "." if entry in ("", "./") else entry.rstrip("/") or "/"
        if entry not in entries:
            entries.append(entry)
    return ":".join(entries)


def python_env(cmd: SimpleCommand, env: tuple[str, ...]) -> tuple[str, ...]:
    """The environment with `PYTHONPATH` spelt one way, and without it where it is a no-op."""
    out = []
    for item in env:
        name, eq, value = item.partition("=")
        if name != "PYTHONPATH" or not eq:
            out.append(item)
            continue
        value = python_path(value)
        if value in ("", ".") and _cwd_first(cmd):
            continue
        out.append(f"PYTHONPATH={value}")
    return tuple(out)


def _cwd_first(cmd: SimpleCommand) -> bool:
    """Python puts the working directory first on `sys.path` for this command."""
    if program(cmd.name) != "python" or not cmd.args:
        return False
    first = cmd.args[0]
    return first in ("-c", "-m") or (not first.startswith("-") and "/" not in first)
