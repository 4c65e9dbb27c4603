"""Keys of commands that run code: `python` (code, module or script) and test runners.

Code is compared as its syntax tree (`code.python_key`), a test run as its selection of
tests and the options that change what runs or what is shown. pytest and `python -m pytest`
are one runner. sympy's `bin/test` is another: it runs where pytest is not installed, which
is the case in SWE-bench's sympy images (near-miss round 2, design: in sympy-21847 `pytest f` ends
in "command not found", in sympy-12489 `/usr/bin/python3 -m pytest f` in "No module named pytest",
`bin/test f` runs the file's tests), so the runner is part of the key.
"""

from __future__ import annotations

import re
from dataclasses import replace

from builder.similarity.argv import (
    COSMETIC,
    Key,
    cwd_key,
    flags_of,
    generic_key,
    is_path,
    paths,
    stdout_target,
)
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.code import heredoc_text, python_key
from builder.similarity.normalize import resolve, split_flags

PYTEST_SCRIPTS = frozenset({"bin/test"})
_LISTS_HIDDEN = frozenset({"--fixtures", "--funcargs", "--fixtures-per-test"})
_PARALLEL = re.compile(r"^--parallel=\d+$")  # how many processes, not which tests
# Django's command lines declare `-v/--verbosity` with `type=int, choices=[0, 1, 2, 3]`
# (`tests/runtests.py`; `BaseCommand.create_parser` in django/core/management/base.py)
_LEVELS = frozenset("0123")
_GLUED_VERBOSITY = re.compile(r"(?:-v=?|--verbosity=)(.*)")


def python_command(cmd: SimpleCommand) -> Key:
    """Interpreter options end at `-c CODE`, `-m MODULE`, a script or `-`; the rest is argv.
    `-u` (unbuffered) shows the same output on the screen, but not in a file: a process
    killed while its output is buffered leaves the file without it (django-13809,
    `python -u manage.py runserver > out.txt 2>&1 &` then `kill`)."""
    args = list(cmd.args)
    options: list[str] = []
    while args and args[0].startswith("-") and args[0] not in ("-", "-c", "-m"):
        option = args.pop(0)
        if option in ("-W", "-X") and args:
            option += "=" + args.pop(0)
        options.append(option)
    opts = frozenset(options) - (COSMETIC["python"] if stdout_target(cmd) is None else frozenset())
    if args[:1] == ["-c"] and len(args) > 1:
        return ("python", "code", python_key(args[1], True), opts, paths(args[2:], cmd.cwd))
    if args[:1] == ["-m"] and len(args) > 1:
        # `-m pkg` runs `pkg.__main__` (the `-m` documentation), as `-m pkg.__main__` does
        module, rest = args[1].removesuffix(".__main__"), tuple(args[2:])
        if module == "pytest":
            return pytest_run(rest, cmd.cwd, opts)
        if module == "django":
            return django_command("-m django", rest, cmd.cwd, opts)
        if module == "pip" and not opts:  # `python -m pip install -e .` is `pip install -e .`
            return generic_key(replace(cmd, name="pip", args=rest), "pip")
        flags, positional = flags_of(module, rest, cmd.cwd)  # the module's own command line
        return ("run", "-m", module, opts, flags, paths(positional, cmd.cwd), cwd_key(cmd.cwd))
    if args and args[0] != "-":
        script = resolve(args[0], cmd.cwd)
        if script.endswith("runtests.py"):
            return django_runtests(tuple(args[1:]), opts)
        if script.endswith("manage.py"):
            return django_command(script, tuple(args[1:]), cmd.cwd, opts)
        return ("run", "script", script, opts, paths(args[1:], cmd.cwd), cwd_key(cmd.cwd))
    code = heredoc_text(cmd.heredoc or "", cmd.heredoc_literal)
    return ("python", "code", python_key(code, True), opts, paths(args[1:], cmd.cwd))


def pytest_run(
    args: tuple[str, ...],
    cwd: str | None,
    opts: frozenset[str] = frozenset(),
    runner: str = "pytest",
) -> Key:
    """The tests selected (files and node ids resolved) and the options that matter.
    Verbosity is the log only, except where it decides what is listed: `--fixtures` shows
    fixtures with a leading `_` "only with -v" (`pytest --help`; round 7 held-out pair
    221346146a18e383, a task about a private fixture's name)."""
    flags, positional = flags_of("pytest", args, cwd)
    if flags & _LISTS_HIDDEN:
        flags |= split_flags("pytest", args)[0] & {"-v"}  # `-vv` and `--verbose` are `-v`
    selection = tuple(
        sorted(resolve(p, cwd) if is_path(p.partition("::")[0]) else p for p in positional)
    )
    return ("test", runner, selection, flags, opts)


def without_verbosity(args: tuple[str, ...]) -> tuple[str, ...] | None:
    """A Django command line without its verbosity and that option's value (how much is
    logged, not what runs); None where argparse rejects it: `-v` last or before anything but
    0-3 prints the usage and exits before a test runs (`runtests.py label -v` vs
    `--verbosity=2`, near-miss round 7)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg in ("-v", "--verbosity"):
            if i == len(args) or args[i] not in _LEVELS:
                return None
            i += 1
        elif (glued := _GLUED_VERBOSITY.fullmatch(arg)) is not None:
            if glued[1] not in _LEVELS:
                return None
        else:
            out.append(arg)
    return tuple(out)


def django_command(
    runner: str, args: tuple[str, ...], cwd: str | None, opts: frozenset[str] = frozenset()
) -> Key:
    """`python -m django`, `manage.py`, `django-admin`: the subcommand and its arguments,
    verbosity aside. The runners stay apart: `manage.py` sets the project's settings."""
    rest = without_verbosity(args)
    if rest is None:
        return ("error", runner, "usage")
    flags, positional = flags_of("django", rest, cwd)
    return ("run", runner, opts, flags, paths(positional, cwd), cwd_key(cwd))


def django_runtests(args: tuple[str, ...], opts: frozenset[str] = frozenset()) -> Key:
    """Django's `tests/runtests.py`: the test labels, verbosity and parallelism aside."""
    rest = without_verbosity(args)
    if rest is None:
        return ("error", "runtests", "usage")
    flags, labels = flags_of("runtests", rest)
    flags = frozenset(f for f in flags if not _PARALLEL.match(f))
    labels = tuple(sorted(a for a in labels if not a.isdigit()))  # `--parallel 2`: its value
    return ("test", "runtests", labels, flags, opts)
