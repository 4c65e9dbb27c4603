"""The canonical key of one simple command: what it does, with nothing that could change it
left out.

Strict by construction: program, options, positional arguments, environment assignments,
wrappers (`timeout 60`) and redirections are all part of the key, each in a canonical
spelling (`argv`: flag bundles and order, quoting, `./` and repository-root prefixes, paths
resolved against a `cd`). Only options listed in `argv.COSMETIC` are left out: each changes
how an output looks, never what it holds (`grep -n`, `ls -l`, `pytest -v`, `rm -f`).
Programs with their own grammar have a handler: Python and test runners (`invocations`),
grep (patterns, scope and the options that change matches), `sed -i`, writes of heredocs and
echoes and file operations (`writes`), git and find. The real pairs that motivate the rules
are named in `tests/similarity/test_strict.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from builder.similarity.argv import (
    COSMETIC,
    FILE_LIKE,
    Key,
    flags_of,
    generic_key,
    paths,
    program_of,
    redirect_key,
)
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.grep_errors import compile_error
from builder.similarity.invocations import (
    PYTEST_SCRIPTS,
    django_command,
    django_runtests,
    pytest_run,
    python_command,
)
from builder.similarity.normalize import program, resolve, split_flags
from builder.similarity.writes import echo_key, file_operation_key, submit_key, write_key

_SYSTEM_BIN = ("/usr/bin/", "/bin/")
_GIT_ALIASES = {"--staged": "--cached", "--patch": "-p", "-u": "-p"}
_RECURSIVE = frozenset({"-r", "-R", "--recursive"})
_OTHER_SYNTAX = frozenset({"-F", "-P", "-G"})  # and `-f FILE`: patterns not on the line
_FIND_ORDERED = frozenset(
    {
        "-o",
        "-or",
        "-a",
        "-and",
        "!",
        "-not",
        "(",
        ")",
        ",",
        "-delete",
        "-print",
        "-print0",
        "-printf",
        "-prune",
        "-quit",
        "-fprint",
    }
)


def _grep(cmd: SimpleCommand) -> Key:
    key = _search(cmd)
    flags, patterns = key[3], key[2]
    other = flags & _OTHER_SYNTAX or any(f.startswith("-f=") for f in flags)
    if key[1] == "grep" and patterns and not other:
        errors = {compile_error(p, ere="-E" in flags) for p in patterns}
        if None not in errors and len(errors) == 1:
            return ("search", "grep-error", tuple(errors), frozenset(), ("-",))
    return key


def _search(cmd: SimpleCommand) -> Key:
    prog = program(cmd.name)
    family = "rg" if prog in ("rg", "ag", "ack") else "grep"
    flags, positional = flags_of("rg" if family == "rg" else "grep", cmd.args, cmd.cwd)
    flags = flags - COSMETIC["grep"]
    if cmd.name.endswith("egrep"):
        flags |= {"-E"}
    elif cmd.name.endswith("fgrep"):
        flags |= {"-F"}
    patterns = sorted(f.split("=", 1)[1] for f in flags if f.startswith("-e="))
    flags = frozenset(f for f in flags if not f.startswith("-e="))
    if not patterns and positional:
        patterns, positional = [positional[0]], positional[1:]
    scope = tuple(sorted(resolve(p, cmd.cwd) for p in positional))
    recursive = family == "rg" or bool(_RECURSIVE & flags)
    if recursive and not scope:
        scope = (resolve(".", cmd.cwd),)
    if scope and all(FILE_LIKE.search(p) for p in scope):
        flags -= _RECURSIVE  # -r on files is a no-op (django-13195: grep -r X file.py)
    return ("search", family, tuple(patterns), flags, scope or ("-",))


def _git(cmd: SimpleCommand) -> Key:
    args = list(cmd.args)
    cwd = cmd.cwd
    options = []
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option == "-C" and args:
            cwd = resolve(args.pop(0), cwd)
        elif option == "-c" and args:
            options.append("-c=" + args.pop(0))
        elif option not in COSMETIC["git"]:
            options.append(option)
    sub = args.pop(0) if args else ""
    args = [f"-n{a[1:]}" if re.fullmatch(r"-\d+", a) else a for a in args]  # `-5` = `-n 5`
    if sub == "grep":
        inner = _search(SimpleCommand(name="grep", args=tuple(args), cwd=cwd))
        return ("search", "git-grep", *inner[2:], tuple(options))
    flags, positional = flags_of("git", tuple(args), cwd)
    flags = frozenset(_GIT_ALIASES.get(f, f) for f in flags)
    return ("vcs", sub, frozenset(options), flags, paths(positional, cwd))


def _ls(cmd: SimpleCommand) -> Key:
    flags, positional = flags_of("ls", cmd.args, cmd.cwd)
    targets = tuple(sorted(resolve(p, cmd.cwd) for p in positional)) or (resolve(".", cmd.cwd),)
    return ("list", "ls", flags, targets)


def _find(cmd: SimpleCommand) -> Key:
    """Start points resolved; every predicate kept in order (`-name x -type f` is not
    `-type d`)."""
    args = list(cmd.args)
    starts = []
    while args and not args[0].startswith(("-", "(", "!")):
        starts.append(resolve(args.pop(0), cmd.cwd))
    kind = "search" if any(a in ("-name", "-iname", "-path", "-regex") for a in args) else "list"
    return (kind, "find", tuple(starts) or (resolve(".", cmd.cwd),), _predicates(args))


def _predicates(args: list[str]) -> tuple[str, ...]:
    """find's expression: tests joined only by the implicit AND (no `-o`, `!`, parentheses
    or actions) hold in any order (`-name "*.py" -path "*x*"` = `-path "*x*" -name "*.py"`);
    anything else stays as written."""
    if any(a in _FIND_ORDERED or a.startswith(("-exec", "-ok")) for a in args):
        return tuple(args)
    pairs = []
    while args:
        test = args.pop(0)
        value = args.pop(0) if args and not args[0].startswith("-") else ""
        pairs.append(f"{test} {value}")
    return tuple(sorted(pairs))


def _sed(cmd: SimpleCommand) -> Key:
    flags, positional = split_flags("sed", cmd.args)
    scripts = [f.split("=", 1)[1] for f in flags if f.startswith("-e=")]
    if not scripts and positional:
        scripts, positional = [positional[0]], positional[1:]
    rest = frozenset(f for f in flags if not f.startswith("-e="))
    inplace = any(f.startswith("-i") or f == "--in-place" for f in rest)
    targets = paths(positional, cmd.cwd)
    return ("edit" if inplace else "run", "sed", tuple(scripts), rest, targets)


_HANDLERS: dict[str, Callable[[SimpleCommand], Key]] = {
    "python": python_command,
    "pytest": lambda c: pytest_run(c.args, c.cwd),
    "grep": _grep,
    "rg": _grep,
    "ag": _grep,
    "ack": _grep,
    "git": _git,
    "ls": _ls,
    "find": _find,
    "sed": _sed,
    "echo": echo_key,
    "printf": echo_key,
    "submit": lambda c: submit_key("submit", {"args": list(c.args)} if c.args else {}),
}


def command_key(cmd: SimpleCommand) -> Key:
    """The canonical key of one simple command (its wrappers and environment excluded)."""
    prog = program_of(cmd.name)
    if prog in ("cat", "tee", "echo", "printf"):
        written = write_key(cmd, prog)
        if written is not None:
            return written
    if prog in ("rm", "rmdir", "mkdir", "touch", "chmod", "cp", "mv"):
        return file_operation_key(cmd, prog)
    handler = _HANDLERS.get(prog)
    key = handler(cmd) if handler is not None else _program_key(cmd, prog)
    if prog == "python" and cmd.name.startswith(_SYSTEM_BIN):
        # the distribution's interpreter is not the environment's `python` in the images
        # agents run in: /usr/bin/python3 cannot import Django (django-15554) and has no
        # pytest (sympy-12489 and four round-1 design pairs) where `python` has both
        key = (*key, ("interpreter", cmd.name))
    if key[0] not in ("output", "submit"):
        key = (*key, redirect_key(cmd.redirects, cmd.cwd))
    return key


def _program_key(cmd: SimpleCommand, prog: str) -> Key:
    name = resolve(cmd.name, cmd.cwd) if "/" in cmd.name else prog
    if name in PYTEST_SCRIPTS:
        return pytest_run(cmd.args, cmd.cwd, runner=name)
    if name.endswith("runtests.py"):
        return django_runtests(cmd.args)
    if name == "django-admin" or name.endswith("manage.py"):
        return django_command(name, cmd.args, cmd.cwd)
    return generic_key(cmd, prog)
