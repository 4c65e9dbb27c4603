"""Flags that change what an action shows, per program.

Most flags are cosmetic for the question "is this the same next action" (`grep -n`, `ls -l`,
`pytest -v`), but some change the answer the agent gets: `ls -R` lists a tree, `grep -l` lists
files instead of matches, `grep -v` inverts, `wc -l` counts lines not words, `find -type d`
finds directories. Two commands of the same program that disagree on these are different
actions; the semantic similarity caps them below the gate.
"""

from __future__ import annotations

# per program: flag name -> canonical name (aliases share one)
SHOWN: dict[str, dict[str, str]] = {
    "ls": {"-R": "-R", "--recursive": "-R", "-d": "-d", "--directory": "-d"},
    "tree": {"-d": "-d", "-L": "-L", "-f": "-f"},
    "grep": {
        "-v": "-v",
        "--invert-match": "-v",
        "-l": "-l",
        "--files-with-matches": "-l",
        "-L": "-L",
        "--files-without-match": "-L",
        "-c": "-c",
        "--count": "-c",
        "-o": "-o",
        "--only-matching": "-o",
        "-q": "-q",
        "--quiet": "-q",
    },
    "find": {
        "-type": "-type",
        "-maxdepth": "-maxdepth",
        "-mindepth": "-mindepth",
        "-size": "-size",
        "-mtime": "-mtime",
        "-newer": "-newer",
        "-empty": "-empty",
        "-delete": "-delete",
    },
    "wc": {"-l": "-l", "-w": "-w", "-c": "-c", "-m": "-m", "-L": "-L", "--lines": "-l"},
    "head": {"-c": "-c"},
    "tail": {"-c": "-c", "-f": "-f"},
    "pytest": {"--collect-only": "--co", "--co": "--co"},
    "du": {"-s": "-s", "-a": "-a"},
}


def shown_flags(program: str, flags: frozenset[str]) -> frozenset[str]:
    """The flags of `program` that change what it shows, canonical, with their values; the
    flags of a `find` feeding it (`find-type=d`, see `programs.narrowed`) count too."""
    out = {flag for flag in flags if flag.startswith("find-")}
    table = SHOWN.get(program)
    if not table:
        return frozenset(out)
    for flag in flags:
        name, eq, value = flag.partition("=")
        canonical = table.get(name)
        if canonical is not None:
            out.add(f"{canonical}={value}" if eq else canonical)
    return frozenset(out)


# file-scope globs: `--include=*.py` and none search nearly the same files of a Python repo,
# but two different globs (`*.py`, `*.pyx`) search different files
SCOPE_GLOBS = ("--include", "--exclude")


def scope_conflict(xs: frozenset[str], ys: frozenset[str]) -> bool:
    """True when both sides restrict the searched files by a glob and the globs differ."""
    for key in SCOPE_GLOBS:
        gx = {f.partition("=")[2] for f in xs if f.partition("=")[0] == key}
        gy = {f.partition("=")[2] for f in ys if f.partition("=")[0] == key}
        if gx and gy and gx != gy:
            return True
    return False
