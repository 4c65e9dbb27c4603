"""A command's arguments in one canonical spelling: the parts every command key is built of.

Options are an order-free set (`-rn` = `-r -n`, values as `-n=20`) without the cosmetic ones,
path arguments and path-valued options are resolved against the `cd` in force and the
repository root, redirections that change what is shown or written are kept.
"""

from __future__ import annotations

import re

from builder.similarity.bashparse import Redirect, SimpleCommand
from builder.similarity.normalize import program, resolve, split_flags, strip_root

# (kind, ...): read, search, list, run, python, test, write, edit, vcs, output or submit
Key = tuple

# options that change how an output looks but not what it holds, per program
COSMETIC: dict[str, frozenset[str]] = {
    name: frozenset(flags.split())
    for name, flags in {
        "python": "-u -B",  # -u counts when stdout goes into a file (`invocations`)
        "pytest": "-v -vv -vvv --verbose -q -qq --quiet --no-header -p=no:cacheprovider "
        "--color=yes --color=no",
        "runtests": "--parallel --noinput",  # verbosity: invocations.without_verbosity
        "grep": "-n --line-number -H --with-filename -s --no-messages --color --color=auto "
        "--color=always --color=never --colour -T --initial-tab",
        "ls": "-l -h -F -1 -G -o -g -s -t -S -r -X -v -p -i --color --color=auto --color=never "
        "--group-directories-first",
        "rm": "-f --force -v --verbose",
        "mkdir": "-p --parents -v",
        "cp": "-v",
        "mv": "-v",
        "pip": "-q --quiet -v",
        # reports are off unless asked for (pylint docs, "--reports, -r": default False), so
        # `-rn` restates the default. `-v` stays: where it was tried (pylint-6386) whether it
        # turns verbose mode on is what the run shows, and a `v` in a bundle never does
        # (normalize.BUNDLE_INERT)
        "pylint": "-r=n -r=no",
        # sphinx-build -v: "Increase verbosity (loglevel)" (sphinx-build docs), the log only
        "sphinx-build": "-v -vv -vvv",
        "sphinx": "-v -vv -vvv",
        "git": "--no-pager --color --color=always --no-color",
    }.items()
}
# programs whose list options are split on commas with each item stripped and empty items
# dropped: pylint's csv options (`_splitstrip` in pylint/utils/utils.py) and flake8's
# (`parse_comma_separated_list`), so `--bad-names-rgxs="foo, bar"` and `"foo,,bar"` are
# `"foo,bar"` (pylint-dev__pylint-8898)
_COMMA_LISTS = frozenset({"pylint", "flake8"})
FILE_LIKE = re.compile(r"\.\w{1,5}$")
_STDOUT = {">": ">", "1>": ">", ">|": ">", ">>": ">>", "1>>": ">>", "&>": "&>", "&>>": "&>>"}


def program_of(name: str) -> str:
    """`program`, but Python 2 stays apart from Python 3 (`python --version` is not
    `python2 --version`, psf__requests-1724)."""
    base = name.rsplit("/", 1)[-1]
    return "python2" if base.startswith("python2") else program(name)


def is_path(token: str) -> bool:
    return "/" in token or bool(FILE_LIKE.search(token)) or token in (".", "..")


def paths(tokens: tuple[str, ...] | list[str], cwd: str | None) -> tuple[str, ...]:
    """Positional arguments with the path-like ones resolved against `cwd` and the root."""
    return tuple(resolve(t, cwd) if is_path(t) else t for t in tokens)


def redirect_key(redirects: tuple[Redirect, ...], cwd: str | None) -> tuple[str, ...]:
    """Redirections that change what is shown or written; `2>&1` only merges the two
    streams the agent sees anyway, and is left out. `2>/dev/null` hides errors: kept."""
    out = []
    for r in redirects:
        if r.op == "2>&1" or (r.op.endswith(">&") and r.target in ("1", "2")):
            continue
        target = r.target if r.target.startswith("/dev/") else resolve(r.target, cwd)
        out.append(f"{_STDOUT.get(r.op, r.op)}{target}")
    return tuple(sorted(out))


def stdout_target(cmd: SimpleCommand) -> tuple[str, str] | None:
    """(`>` or `>>`, file) when the command's stdout goes into a file."""
    for r in cmd.redirects:
        op = _STDOUT.get(r.op)
        if op in (">", ">>") and r.target and not r.target.startswith("/dev/"):
            return op, resolve(r.target, cmd.cwd)
    return None


def flags_of(
    prog: str, args: tuple[str, ...], cwd: str | None = None
) -> tuple[frozenset[str], tuple[str, ...]]:
    """(options without the cosmetic ones, their path values resolved, positional arguments)."""
    flags, positional = split_flags(prog, args)
    out = set()
    for flag in flags - COSMETIC.get(prog, frozenset()):
        name, eq, value = flag.partition("=")
        if eq and prog in _COMMA_LISTS and "," in value and "{" not in value:
            value = ",".join(item.strip() for item in value.split(",") if item.strip())
            flag = f"{name}={value}"
        out.add(f"{name}={resolve(value, cwd)}" if eq and is_path(value) else flag)
    return frozenset(out), positional


def cwd_key(cwd: str | None) -> str | None:
    """The directory a command runs in, None for the repository root."""
    if cwd is None:
        return None
    where = strip_root(cwd)
    return None if where == "." else where


def generic_key(cmd: SimpleCommand, prog: str) -> Key:
    """Any other program: its name (or script path), options, arguments and directory."""
    flags, positional = flags_of(prog, cmd.args, cmd.cwd)
    name = resolve(cmd.name, cmd.cwd) if "/" in cmd.name else prog
    return ("run", name, flags, paths(positional, cmd.cwd), cwd_key(cmd.cwd))
