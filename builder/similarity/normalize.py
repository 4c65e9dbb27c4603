"""Lexical normalisation of actions: what `normalized` compares and `semantic` builds on.

Two actions that differ only in whitespace, quoting, flag order, `./` or repository-root path
prefixes, a `cd <repo root> &&` prefix, or JSON key order get the same key. Everything else
(different programs, python vs python3, a `cd` into a sub-directory) stays different: that is
what the `semantic` similarity is for.
"""

from __future__ import annotations

import json
import posixpath
import re
from functools import lru_cache

from builder.ingest.formats.base import SHELL_TOOLS, canonical_json
from builder.similarity.bashparse import NAVIGATION, SimpleCommand, parse_script
from builder.similarity.word_options import WORD_OPTIONS, word_flags
from schemas.steps import Action

_WS = re.compile(r"\s+")
# /testbed, /repo, /app: SWE-bench style images; /workspace/<repo>__<ver>: OpenHands;
# /<owner>__<repo>: SWE-agent 0.x; /workspace alone last.
ROOT_PATTERN = re.compile(
    r"^(?:/testbed|/repo|/app|/workspace/[^/\s]*__[^/\s]*|/[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+"
    r"|/workspace)(?=/|$)"
)
# flags that take a value, per program (getopt style: `-n 20`, `-n20`, `-ba` = `-b a`)
VALUE_FLAGS: dict[str, frozenset[str]] = {
    "grep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude", "-d"}),
    "rg": frozenset({"-e", "-g", "-t", "-T", "-A", "-B", "-C", "-m", "--glob", "--type"}),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "sed": frozenset({"-e", "-f"}),
    "awk": frozenset({"-F", "-v", "-f"}),
    "nl": frozenset({"-b", "-w", "-s", "-v", "-i", "-n"}),
    "python": frozenset({"-c", "-m", "-W", "-X"}),
    # pytest: `-rsx` is `-r sx` (the summary's report chars), not `-r -s -x` (pytest --help)
    "pytest": frozenset(
        {
            "-k",
            "-m",
            "-p",
            "--tb",
            "--maxfail",
            "-o",
            "--rootdir",
            "-n",
            "-r",
            "-W",
            "-c",
            "--ignore",
            "--deselect",
            "--durations",
            "--import-mode",
        }
    ),
    "git": frozenset({"-C", "-c", "-n", "-m", "--format", "--pretty", "-U"}),
    "pip": frozenset({"-r", "-c", "-e", "-i", "--index-url"}),
    "xargs": frozenset({"-n", "-I", "-P", "-d", "-L"}),
    "timeout": frozenset({"-s", "-k"}),
    "cut": frozenset({"-d", "-f", "-c"}),
    "sort": frozenset({"-k", "-t"}),
    "tree": frozenset({"-L", "-I", "-P"}),
    # pylint's options with a value (`-rn` is `--reports=n`, not `-r -n`; `pylint --help`);
    # long names with a short one are aliased to it first (LONG_OPTIONS)
    "pylint": frozenset(
        [
            "-r",
            "-j",
            "-d",
            "-e",
            "-f",
            "-s",
            "--rcfile",
            "--ignore",
            "--ignore-paths",
            "--ignore-patterns",
            "--load-plugins",
        ]
    ),
}
# long options as their short names, per program (`--verbose` is `-v`: `pylint --help`,
# `pytest --help`, `grep --help`), so the two spellings of one option compare equal
LONG_OPTIONS: dict[str, dict[str, str]] = {
    "pylint": {
        "--verbose": "-v", "--reports": "-r", "--jobs": "-j", "--disable": "-d",
        "--enable": "-e", "--errors-only": "-E", "--output-format": "-f", "--score": "-s",
    },
    "pytest": {
        "--exitfirst": "-x", "--capture=no": "-s", "--pythonwarnings": "-W",
        "--override-ini": "-o", "--config-file": "-c", "--verbose": "-v", "--quiet": "-q",
    },
    "grep": {
        "--ignore-case": "-i", "--recursive": "-r", "--count": "-c", "--invert-match": "-v",
        "--files-with-matches": "-l", "--word-regexp": "-w", "--extended-regexp": "-E",
        "--fixed-strings": "-F", "--after-context": "-A", "--before-context": "-B",
        "--context": "-C", "--regexp": "-e", "--max-count": "-m", "--line-number": "-n",
    },
}  # fmt: skip
_PROGRAM_ALIASES = {"egrep": "grep", "fgrep": "grep", "py.test": "pytest"}
# short options that do nothing inside a bundle: pylint sets verbose mode while preprocessing
# its arguments, matching only a whole `-v`/`--verbose` (`_preprocess_options`,
# pylint/config/utils.py), and argparse's `-v` is a `_DoNothingAction`
# (pylint/lint/base_options.py), so `-vrn` is `-rn`: pylint-6386 logs `-v -rn` verbose and
# `-vrn` not, with no edit between (round 1 pair 0a28dcb4a407424b, adjudicated)
BUNDLE_INERT: dict[str, frozenset[str]] = {"pylint": frozenset({"-v"})}


def collapse_ws(text: str) -> str:
    """Runs of whitespace as one space, ends stripped: the `semantic` fast path."""
    return _WS.sub(" ", text).strip()


def program(name: str) -> str:
    """Canonical program name: basename, `python3.11` -> `python`, `egrep` -> `grep`."""
    base = name.rsplit("/", 1)[-1]
    if re.fullmatch(r"python[0-9.]*", base):
        return "python"
    if re.fullmatch(r"pip[0-9.]*", base):
        return "pip"
    return _PROGRAM_ALIASES.get(base, base)


def strip_root(path: str) -> str:
    """Drop `./` and repository-root prefixes: `/testbed/a.py`, `./a.py` and `a.py` agree."""
    if path.startswith("/"):
        match = ROOT_PATTERN.match(path)
        if match:
            path = path[match.end() :].lstrip("/") or "."
    while path.startswith("./"):
        path = path[2:]
    return path or "."


def resolve(path: str, cwd: str | None) -> str:
    """A path as seen from the repository root: joined to the `cd` target, prefixes stripped."""
    path = path.strip()
    if cwd and not path.startswith(("/", "~", "$")):
        path = posixpath.join(cwd, path)
    path = strip_root(path)
    if not any(ch in path for ch in "*?[$~"):
        path = posixpath.normpath(path)
    return path


def split_flags(prog: str, args: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """(order-free flag set, positional arguments); `-rn` = `-r -n`, values as `-n=20`."""
    if prog in WORD_OPTIONS:
        return word_flags(prog, args)
    values = VALUE_FLAGS.get(prog, frozenset())
    flags: set[str] = set()
    positionals: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positionals.extend(args[i:])
            break
        if prog in ("head", "tail") and re.fullmatch(r"-\d+", arg):
            flags.add(f"-n={arg[1:]}")
        elif arg.startswith("--") and len(arg) > 2:
            aliases = LONG_OPTIONS.get(prog, {})
            arg = aliases.get(arg, arg)  # a whole flag (`--capture=no`) first
            name, eq, value = arg.partition("=")
            name = aliases.get(name, name)
            if not eq and name in values and i < len(args):
                value, i = args[i], i + 1
                eq = "="
            flags.add(f"{name}={value}" if eq else name)
        elif arg.startswith("-") and len(arg) > 1 and not re.fullmatch(r"-\d+(\.\d+)?", arg):
            inert = BUNDLE_INERT.get(prog, frozenset()) if len(arg) > 2 else frozenset()
            i = _bundle(arg, args, i, values, flags, inert)
        else:
            positionals.append(arg)
    return frozenset(flags), tuple(positionals)


def _bundle(
    arg: str,
    args: tuple[str, ...],
    i: int,
    values: frozenset[str],
    out: set[str],
    inert: frozenset[str] = frozenset(),
) -> int:
    for pos, ch in enumerate(arg[1:], start=1):
        flag = "-" + ch
        if flag in inert:
            continue
        if flag in values:
            rest = arg[pos + 1 :]
            if rest:
                out.add(f"{flag}={rest}")
            elif i < len(args):
                out.add(f"{flag}={args[i]}")
                i += 1
            else:
                out.add(flag)
            return i
        out.add(flag)
    return i


def _path_token(token: str) -> str:
    if token.startswith("/") and ROOT_PATTERN.match(token):
        return strip_root(token)
    return strip_root(token) if token.startswith("./") else token


# programs whose positional arguments are all paths (and `.` when none): `cd d && ls` = `ls d`
_PATH_ARGS = frozenset({"ls", "cat", "nl", "head", "tail", "wc", "stat", "file", "less", "more"})
_DEFAULT_DOT = frozenset({"ls", "tree", "du"})


def _path_positions(prog: str, flags: frozenset[str], positionals: tuple[str, ...]) -> range:
    """Which positionals are paths, for programs where that is known."""
    if prog in _PATH_ARGS or prog in _DEFAULT_DOT:
        return range(len(positionals))
    if prog in ("grep", "rg", "sed"):
        has_e = any(f.startswith("-e=") for f in flags)
        return range(0 if has_e else 1, len(positionals))
    return range(0)


def _resolved(prog: str, cmd: SimpleCommand) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """(flags, positionals with paths resolved against `cmd.cwd`) when every path is known."""
    if prog not in _PATH_ARGS | _DEFAULT_DOT | {"grep", "rg", "sed"}:
        return None
    flags, positionals = split_flags(prog, cmd.args)
    items = list(positionals)
    recursive = prog == "rg" or bool({"-r", "-R", "--recursive"} & flags)
    if not items and (prog in _DEFAULT_DOT):
        items = ["."]
    elif prog in ("grep", "rg") and len(items) == 1 and recursive:
        items.append(".")
    for i in _path_positions(prog, flags, tuple(items)):
        items[i] = resolve(items[i], cmd.cwd)
    return flags, tuple(items)


def command_key(cmd: SimpleCommand) -> str:
    """The normalised text of one simple command (paths resolved where the program is known)."""
    prog = program(cmd.name) if cmd.name else ""
    flags: frozenset[str] = frozenset()
    positionals = cmd.args  # find's predicates are order-sensitive: kept as written
    resolved = _resolved(prog, cmd)
    if resolved is not None:
        flags, positionals = resolved
    elif prog != "find":
        flags, positionals = split_flags(prog, cmd.args)
    parts = [cmd.name.rsplit("/", 1)[-1] if "/" not in cmd.name else _path_token(cmd.name)]
    parts += sorted(_path_token(f) for f in flags)
    parts += [_path_token(p) for p in positionals]
    parts += [f"{r.op}{_path_token(r.target)}" for r in cmd.redirects]
    if cmd.heredoc is not None:
        parts.append("<<" + cmd.heredoc.strip())
    return json.dumps(parts, ensure_ascii=False)


def _cwd_free(pipe_commands: tuple[SimpleCommand, ...]) -> bool:
    """True when every command's paths were resolved, so a `cd` before it can be dropped."""
    return all(
        _resolved(program(c.name), c) is not None or program(c.name) in NAVIGATION
        for c in pipe_commands
    )


@lru_cache(maxsize=8192)
def shell_key(command: str) -> str:
    """Normalised key of a shell command; unparseable commands fall back to collapsed text.

    A `cd` is dropped when it goes to the repository root, or when every later command is one
    whose paths are resolved against it (`cd src && ls` = `ls src`).
    """
    script = parse_script(command)
    if not script.ok:
        return "raw:" + collapse_ws(command)
    pipes = []
    for index, pipe in enumerate(script.pipelines):
        if len(pipe.commands) == 1 and pipe.commands[0].name in NAVIGATION:
            target = pipe.commands[0].args[0] if pipe.commands[0].args else "~"
            rest = tuple(c for p in script.pipelines[index + 1 :] for c in p.commands)
            if strip_root(target) == "." or (rest and _cwd_free(rest)):
                continue
        pipes.append(" | ".join(command_key(c) for c in pipe.commands))
    return " ; ".join(pipes)


def canonical_arguments(arguments: str) -> dict[str, object]:
    """Tool arguments as a dict with root-prefixed paths stripped (`{}` when not JSON)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": collapse_ws(arguments)}
    if not isinstance(value, dict):
        return {"_value": value}
    for key in ("path", "file_path", "filePath", "notebook_path"):
        if isinstance(value.get(key), str):
            value[key] = strip_root(value[key])
    return value


@lru_cache(maxsize=8192)
def _action_key(tool: str, arguments: str, command: str | None) -> str:
    if command is not None or tool in SHELL_TOOLS:
        return "shell:" + shell_key(command or "")
    return f"tool:{tool}:" + canonical_json(canonical_arguments(arguments))


def action_key(action: Action) -> str:
    """The normalised key of an action; shell actions compare by command only."""
    return _action_key(action.tool, action.arguments, action.command)
