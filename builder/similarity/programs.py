"""Per-program feature extraction for one simple command (`grep`, `sed`, `python`, `git`, ...).

Each handler knows which arguments of its program are files, patterns, line ranges or inline
content; unknown programs fall back to a generic split (path-like arguments are files).
"""

from __future__ import annotations

import re
from dataclasses import replace

from builder.similarity import intent as it
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.flags import shown_flags
from builder.similarity.git import as_git_grep, git_features, git_grep_command
from builder.similarity.normalize import program, resolve, split_flags
from builder.similarity.records import SUBMIT_FEATURES, WHOLE, Features, LineRange
from builder.similarity.runners import (
    pip_features,
    pytest_features,
    python_features,
    python_module_command,
    run_script,
)
from builder.similarity.swe_commands import editor_cli, swe_create, swe_open, swe_search

_SED_RANGE = re.compile(r"^(\d+|\$)(?:,(\d+|\$|\+\d+))?p$")
_WRITE_OPS = {">": "write", ">|": "write", "&>": "write", ">>": "append", "&>>": "append"}


def command_features(cmd: SimpleCommand) -> Features:
    """Features of one simple command, by program."""
    prog = program(cmd.name)
    if prog == "git" and (inner := git_grep_command(cmd)) is not None:
        return as_git_grep(command_features(inner), cmd)
    if prog == "python" and (inner := python_module_command(cmd)) is not None:
        return command_features(inner)
    handler = _HANDLERS.get(prog)
    if handler is not None:
        return handler(prog, cmd)
    if ("/" in cmd.name and prog.endswith((".sh", ".py"))) or cmd.name.startswith("./"):
        return run_script(prog, cmd, resolve(cmd.name, cmd.cwd), cmd.args)
    return _generic(prog, cmd)


def _paths(args: tuple[str, ...] | list[str], cwd: str | None) -> frozenset[str]:
    return frozenset(resolve(a, cwd) for a in args)


def _write_target(cmd: SimpleCommand) -> tuple[str, str] | None:
    for r in cmd.redirects:
        op = _WRITE_OPS.get(r.op)
        if op and r.target not in ("/dev/null", "") and not r.target.isdigit():
            return op, resolve(r.target, cmd.cwd)
    return None


def _generic(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags(prog, cmd.args)
    intent = it.program_intent(prog)
    files = [p for p in pos if "/" in p or re.search(r"\.\w{1,5}$", p) or p in (".", "..")]
    others = [p for p in pos if p not in files]
    write = _write_target(cmd)
    if intent == it.MODIFY or intent == it.INFO or intent == it.LIST:
        files, others = list(pos), []
    if intent == it.LIST and not files:
        files = ["."]
    return Features(
        intent=intent,
        verb=prog,
        op=it.MODIFY_OPS.get(prog) if intent == it.MODIFY else None,
        files=_paths(files, cmd.cwd)
        | (frozenset({write[1]}) if write and intent == it.MODIFY else frozenset()),
        patterns=frozenset(others),
        flags=flags,
        content=cmd.heredoc,
    )


def _echo(prog: str, cmd: SimpleCommand) -> Features:
    text = " ".join(a for a in cmd.args if not re.fullmatch(r"-[neE]+", a))
    write = _write_target(cmd)
    if write:
        return Features(
            intent=it.MODIFY, verb="write", op=write[0], files=frozenset({write[1]}), content=text
        )
    return Features(intent=it.OUTPUT, verb=prog, content=text)


def _cat(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags(prog, cmd.args)
    write = _write_target(cmd)
    if write and (cmd.heredoc is not None or not pos):
        return Features(
            intent=it.MODIFY,
            verb="write",
            op=write[0],
            files=frozenset({write[1]}),
            content=cmd.heredoc,
        )
    files = _paths(pos, cmd.cwd)
    return Features(
        intent=it.READ, verb=prog, files=files, ranges=(WHOLE,) if files else (), flags=flags
    )


def _head_tail(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags(prog, cmd.args)
    count = next((f.split("=", 1)[1] for f in flags if f.startswith("-n=")), "10")
    rest = frozenset(f for f in flags if not f.startswith("-n="))
    if prog == "tail" and count.startswith("+") and count[1:].isdigit():
        rng = LineRange(int(count[1:]), None)
    elif count.lstrip("-").isdigit() and not count.startswith("-"):
        n = int(count)
        rng = LineRange(1, n) if prog == "head" else LineRange(-n, None)
    else:
        rng = WHOLE
    files = _paths(pos, cmd.cwd)
    return Features(intent=it.READ, verb=prog, files=files, ranges=(rng,), flags=rest)


def _sed(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags(prog, cmd.args)
    scripts = [f.split("=", 1)[1] for f in flags if f.startswith("-e=")]
    if not scripts and pos:
        scripts, pos = [pos[0]], pos[1:]
    script = ";".join(scripts)
    files = _paths(pos, cmd.cwd)
    if any(f.startswith("-i") for f in flags) or "--in-place" in flags:
        return Features(
            intent=it.MODIFY, verb="sed", op="edit", files=files, old_text=script, content=script
        )
    ranges = _sed_ranges(script) if "-n" in flags else None
    if ranges:
        return Features(intent=it.READ, verb="sed", files=files, ranges=ranges)
    return Features(
        intent=it.READ, verb="sed", files=files, patterns=frozenset({script}), ranges=(WHOLE,)
    )


def _sed_ranges(script: str) -> tuple[LineRange, ...] | None:
    out = []
    for piece in re.split(r"[;\n]", script):
        piece = piece.strip().replace(" ", "")
        if not piece:
            continue
        m = _SED_RANGE.match(piece)
        if not m:
            return None
        a, b = m.groups()
        start = -1 if a == "$" else int(a)
        if b is None:
            end: int | None = start if start > 0 else None
        elif b == "$":
            end = None
        elif b.startswith("+"):
            end = start + int(b[1:])
        else:
            end = int(b)
        out.append(LineRange(start, end))
    return tuple(out) or None


def _awk(prog: str, cmd: SimpleCommand) -> Features:
    _, pos = split_flags(prog, cmd.args)
    script, files = (pos[0], pos[1:]) if pos else ("", ())
    lo = re.search(r"NR\s*(>=|>|==)\s*(\d+)", script)
    hi = re.search(r"NR\s*(<=|<)\s*(\d+)", script)
    paths = _paths(files, cmd.cwd)
    if lo or hi:
        start = int(lo.group(2)) + (lo.group(1) == ">") if lo else 1
        end = int(hi.group(2)) - (hi.group(1) == "<") if hi else None
        if lo and lo.group(1) == "==" and not hi:
            end = start
        return Features(intent=it.READ, verb="awk", files=paths, ranges=(LineRange(start, end),))
    regex = re.fullmatch(r"\s*/(.+)/\s*(\{.*\})?\s*", script, re.S)
    if regex:
        return Features(
            intent=it.SEARCH,
            verb="awk",
            op="content",
            files=paths,
            patterns=frozenset({regex.group(1)}),
        )
    return Features(intent=it.READ, verb="awk", files=paths, content=script, ranges=(WHOLE,))


def _grep(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("rg" if prog in ("rg", "ag", "ack") else "grep", cmd.args)
    patterns = [f.split("=", 1)[1] for f in flags if f.startswith("-e=")]
    flags = frozenset(f for f in flags if not f.startswith("-e="))
    if not patterns and pos:
        patterns, pos = [pos[0]], pos[1:]
    recursive = prog != "grep" or bool({"-r", "-R", "--recursive"} & flags)
    files = _paths(pos, cmd.cwd) or (
        frozenset({resolve(".", cmd.cwd)}) if recursive else frozenset()
    )
    if "-i" in flags:
        patterns = [p.lower() for p in patterns]
    return Features(
        intent=it.SEARCH,
        verb="grep",
        op="content",
        files=files,
        patterns=frozenset(patterns),
        flags=flags if prog == "grep" else frozenset(),
    )


def _find(prog: str, cmd: SimpleCommand) -> Features:
    args = list(cmd.args)
    starts = []
    while args and not args[0].startswith(("-", "(", "!")):
        starts.append(args.pop(0))
    patterns: set[str] = set()
    flags: set[str] = set()
    inner: Features | None = None
    while args:
        tok = args.pop(0)
        if tok in ("-exec", "-execdir", "-ok"):
            body = []
            while args and args[0] not in (";", "\\;", "+"):
                body.append(args.pop(0))
            args = args[1:]
            if body:
                inner = command_features(
                    SimpleCommand(name=body[0], args=tuple(body[1:]), cwd=cmd.cwd)
                )
        elif tok in ("-name", "-iname", "-path", "-ipath", "-regex", "-wholename") and args:
            patterns.add(args.pop(0))
        elif tok.startswith("-") and args and not args[0].startswith(("-", "(", ")", "!")):
            flags.add(f"{tok}={args.pop(0)}")
        elif tok.startswith("-"):
            flags.add(tok)
    files = _paths(starts or ["."], cmd.cwd)
    if inner is not None and inner.intent == it.SEARCH:
        return narrowed(inner, files, frozenset(patterns), frozenset(flags))
    intent = it.SEARCH if patterns else it.LIST
    return Features(
        intent=intent,
        verb="find",
        op="name" if patterns else None,
        files=files,
        patterns=frozenset(patterns),
        flags=frozenset(flags),
    )


def narrowed(
    inner: Features,
    files: frozenset[str],
    names: frozenset[str],
    find_flags: frozenset[str] = frozenset(),
) -> Features:
    """`find ... -name X | xargs grep P`: a grep over the found files; names become filters,
    and find's own flags that change what is found (`-type d`) are kept as `find-type=d`."""
    scope = {f"find{f}" for f in shown_flags("find", find_flags)}
    return replace(inner, files=files, flags=inner.flags | {f"-name={n}" for n in names} | scope)


_HANDLERS = {
    "echo": _echo,
    "printf": _echo,
    "cat": _cat,
    "nl": _cat,
    "less": _cat,
    "more": _cat,
    "bat": _cat,
    "head": _head_tail,
    "tail": _head_tail,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "grep": _grep,
    "rg": _grep,
    "ag": _grep,
    "ack": _grep,
    "find": _find,
    "python": python_features,
    "pytest": pytest_features,
    "pip": pip_features,
    "git": git_features,
    "open": swe_open,
    "goto": swe_open,
    "find_file": swe_search,
    "search_dir": swe_search,
    "search_file": swe_search,
    "str_replace_editor": editor_cli,
    "create": swe_create,
    "submit": lambda prog, cmd: SUBMIT_FEATURES,
}
