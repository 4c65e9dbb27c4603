"""The canonical key of one simple command: what it does, with nothing that could change it
left out.

Strict by construction: program, options, positional arguments, environment assignments,
wrappers (`timeout 60`) and redirections are all part of the key, each in a canonical
spelling (flag bundles and order, quoting, `./` and repository-root prefixes, paths resolved
against a `cd`). Only options listed in `COSMETIC` are left out: each changes how an output
looks, never what it holds (`grep -n`, `ls -l`, `pytest -v`, `python -u`, `rm -f`). Programs
with their own grammar have a handler: Python (code as a syntax tree), test runners (the
selection of tests), grep (patterns, scope and the options that change matches), `sed -i`,
writes of heredocs and echoes (target and content), file operations, git and find.
The real pairs that motivate each rule are named in `tests/similarity/test_strict.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace

from builder.similarity.bashparse import Redirect, SimpleCommand
from builder.similarity.code import content_key, heredoc_text, python_key
from builder.similarity.intent import SUBMIT_MARKERS
from builder.similarity.normalize import program, resolve, split_flags, strip_root

# (kind, ...): read, search, list, run, python, test, write, edit, vcs, output or submit
Key = tuple

# options that change how an output looks but not what it holds, per program
COSMETIC: dict[str, frozenset[str]] = {
    name: frozenset(flags.split())
    for name, flags in {
        "python": "-u -B",  # -u counts when stdout goes into a file (`_python`)
        "pytest": "-v -vv -vvv --verbose -q -qq --quiet --no-header -p=no:cacheprovider "
        "--color=yes --color=no",
        "runtests": "-v --parallel --noinput",
        "grep": "-n --line-number -H --with-filename -s --no-messages --color --color=auto "
        "--color=always --color=never --colour -T --initial-tab",
        "ls": "-l -h -F -1 -G -o -g -s -t -S -r -X -v -p -i --color --color=auto --color=never "
        "--group-directories-first",
        "rm": "-f --force -v --verbose",
        "mkdir": "-p --parents -v",
        "cp": "-v",
        "mv": "-v",
        "pip": "-q --quiet -v",
        "git": "--no-pager --color --color=always --no-color",
    }.items()
}
_GIT_ALIASES = {"--staged": "--cached", "--patch": "-p", "-u": "-p"}
_RECURSIVE = frozenset({"-r", "-R", "--recursive"})
_VERBOSITY = re.compile(r"^(-v=?\d|--verbosity(=\d)?|--parallel=\d+)$")
_FILE_LIKE = re.compile(r"\.\w{1,5}$")
_STDOUT = {">": ">", "1>": ">", ">|": ">", ">>": ">>", "1>>": ">>", "&>": "&>", "&>>": "&>>"}
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
_UNORDERED_PATHS = frozenset({"rm", "rmdir", "touch", "mkdir", "chmod"})
# sympy's own test runner runs what pytest would run on the same selection (sympy-16597:
# `pytest sympy/core/tests/test_assumptions.py` vs `bin/test sympy/core/tests/...`)
_PYTEST_SCRIPTS = frozenset({"bin/test"})


def _program(name: str) -> str:
    """`program`, but Python 2 stays apart from Python 3 (`python --version` is not
    `python2 --version`, psf__requests-1724)."""
    base = name.rsplit("/", 1)[-1]
    return "python2" if base.startswith("python2") else program(name)


def is_path(token: str) -> bool:
    return "/" in token or bool(_FILE_LIKE.search(token)) or token in (".", "..")


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
        out.add(f"{name}={resolve(value, cwd)}" if eq and is_path(value) else flag)
    return frozenset(out), positional


# ---------------------------------------------------------------- handlers


def _python(cmd: SimpleCommand) -> Key:
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
        module, rest = args[1], tuple(args[2:])
        if module == "pytest":
            return _pytest(rest, cmd.cwd, opts)
        if module == "pip" and not opts:  # `python -m pip install -e .` is `pip install -e .`
            return _generic(replace(cmd, name="pip", args=rest), "pip")
        flags, positional = flags_of(module, rest, cmd.cwd)  # the module's own command line
        return ("run", "-m", module, opts, flags, paths(positional, cmd.cwd), cwd_key(cmd.cwd))
    if args and args[0] != "-":
        script = resolve(args[0], cmd.cwd)
        if script.endswith("runtests.py"):
            return _runtests(tuple(args[1:]), opts)
        return ("run", "script", script, opts, paths(args[1:], cmd.cwd), cwd_key(cmd.cwd))
    code = heredoc_text(cmd.heredoc or "", cmd.heredoc_literal)
    return ("python", "code", python_key(code, True), opts, paths(args[1:], cmd.cwd))


def _pytest(args: tuple[str, ...], cwd: str | None, opts: frozenset[str] = frozenset()) -> Key:
    flags, positional = flags_of("pytest", args, cwd)
    selection = tuple(
        sorted(resolve(p, cwd) if is_path(p.partition("::")[0]) else p for p in positional)
    )
    return ("test", "pytest", selection, flags, opts)


def _runtests(args: tuple[str, ...], opts: frozenset[str] = frozenset()) -> Key:
    flags, labels = flags_of("runtests", args)
    flags = frozenset(f for f in flags if not _VERBOSITY.match(f))
    labels = tuple(sorted(a for a in labels if not a.isdigit()))  # `-v 2`: a flag's value
    return ("test", "runtests", labels, flags, opts)


def _grep(cmd: SimpleCommand) -> Key:
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
    if scope and all(_FILE_LIKE.search(p) for p in scope):
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
        inner = _grep(SimpleCommand(name="grep", args=tuple(args), cwd=cwd))
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


def _write(cmd: SimpleCommand, prog: str) -> Key | None:
    """`cat <<EOF > f`, `echo x > f`, `printf ... >> f`, `tee f <<EOF`: the file and what
    ends up in it (Python files by syntax tree, others as text)."""
    target = stdout_target(cmd)
    if prog == "tee":
        flags, positional = split_flags("tee", cmd.args)
        if positional:
            target = (">>" if "-a" in flags else ">", resolve(positional[0], cmd.cwd))
    if target is None:
        return None
    if prog in ("cat", "tee"):
        if cmd.heredoc is None or (prog == "cat" and cmd.args):
            return None
        text = heredoc_text(cmd.heredoc, cmd.heredoc_literal)
    elif prog == "echo":
        words = [a for a in cmd.args if not re.fullmatch(r"-[neE]+", a)]
        text = " ".join(words) + ("" if "-n" in cmd.args else "\n")
    else:  # printf: the format and its arguments, exactly
        text = "\0".join(cmd.args)
    return ("write", target[0], target[1], content_key(text, target[1]))


def _echo(cmd: SimpleCommand) -> Key:
    text = " ".join(cmd.args)
    if any(marker in text for marker in SUBMIT_MARKERS):
        return ("submit", "marker")
    return ("output", cmd.name, text)


def _files(cmd: SimpleCommand, prog: str) -> Key:
    flags, positional = flags_of(prog, cmd.args, cmd.cwd)
    targets = paths(positional, cmd.cwd)
    if prog in _UNORDERED_PATHS:
        targets = tuple(sorted(set(targets)))
    return ("edit", prog, flags, targets)


def _generic(cmd: SimpleCommand, prog: str) -> Key:
    flags, positional = flags_of(prog, cmd.args, cmd.cwd)
    name = resolve(cmd.name, cmd.cwd) if "/" in cmd.name else prog
    if name in _PYTEST_SCRIPTS:
        return _pytest(cmd.args, cmd.cwd)
    if name.endswith("runtests.py"):
        return _runtests(cmd.args)
    return ("run", name, flags, paths(positional, cmd.cwd), cwd_key(cmd.cwd))


_HANDLERS: dict[str, Callable[[SimpleCommand], Key]] = {
    "python": _python,
    "pytest": lambda c: _pytest(c.args, c.cwd),
    "grep": _grep,
    "rg": _grep,
    "ag": _grep,
    "ack": _grep,
    "git": _git,
    "ls": _ls,
    "find": _find,
    "sed": _sed,
    "echo": _echo,
    "printf": _echo,
    "submit": lambda c: submit_key("submit", {"args": list(c.args)} if c.args else {}),
}


def submit_key(tool: str, payload: dict) -> Key:
    """A submission: what is submitted (SWE-agent's `submit` command and `submit` tool with
    no argument are one action; another CTF flag is another, SWE-agent ctf/crypto/eps)."""
    return ("submit", tool, json.dumps(payload, sort_keys=True))


def command_key(cmd: SimpleCommand) -> Key:
    """The canonical key of one simple command (its wrappers and environment excluded)."""
    prog = _program(cmd.name)
    if prog in ("cat", "tee", "echo", "printf"):
        written = _write(cmd, prog)
        if written is not None:
            return written
    if prog in ("rm", "rmdir", "mkdir", "touch", "chmod", "cp", "mv"):
        return _files(cmd, prog)
    handler = _HANDLERS.get(prog)
    key = handler(cmd) if handler is not None else _generic(cmd, prog)
    if key[0] not in ("output", "submit"):
        key = (*key, redirect_key(cmd.redirects, cmd.cwd))
    return key


def cwd_key(cwd: str | None) -> str | None:
    """The directory a command runs in, None for the repository root."""
    if cwd is None:
        return None
    where = strip_root(cwd)
    return None if where == "." else where
