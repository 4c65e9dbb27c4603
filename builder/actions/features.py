"""What an action does, as comparable evidence: intent, files, patterns, line ranges, content.

Every action becomes a tuple of `Features`, one per meaningful unit of work (a pipeline of a
shell line, or one editor call). A pipeline is one unit: `nl -ba f | sed -n 10,20p` reads lines
10-20 of f; `grep -rn x . | head` searches. Editor tool calls map onto the same vocabulary
(view = read with a range, create = write, str_replace = edit) so that `cat -n f | sed -n 1,50p`
and `str_replace_editor view f [1, 50]` can be compared at all.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from builder.actions import intent as it
from builder.actions.bashparse import Pipeline, SimpleCommand, parse_script
from builder.actions.normalize import collapse_ws, program, resolve, split_flags
from builder.formats.base import SHELL_TOOLS
from schemas.steps import Action


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines read: 1-based inclusive; `end=None` is to end of file; `start<0` counts from end."""

    start: int
    end: int | None


WHOLE = LineRange(1, None)


@dataclass(frozen=True, slots=True)
class Features:
    """Comparable evidence about one unit of work."""

    intent: str
    verb: str
    op: str | None = None  # finer kind: write/append/edit/delete/view/install/...
    files: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()
    ranges: tuple[LineRange, ...] = ()
    content: str | None = None  # heredoc, python -c code, echoed text, new_str, file_text
    old_text: str | None = None  # the anchor of an edit (old_str, sed -i script)
    git: str | None = None
    flags: frozenset[str] = frozenset()
    editor: bool = False  # came from an editor tool (field-wise comparison applies)


SUBMIT_FEATURES = Features(intent=it.SUBMIT, verb="submit")
EDITOR_TOOLS = frozenset(
    {"str_replace_editor", "str_replace_based_edit_tool", "file_editor", "edit_file"}
)
_SWE_EDIT = re.compile(r"^\s*edit\s+(\d+):(\d+)\s*\n(.*?)\n?end_of_edit\s*$", re.S)
_SED_RANGE = re.compile(r"^(\d+|\$)(?:,(\d+|\$|\+\d+))?p$")
_REF = re.compile(r"HEAD[~^\d]*|[0-9a-f]{7,40}|@|origin/\S+")
_WRITE_OPS = {">": "write", ">|": "write", "&>": "write", ">>": "append", "&>>": "append"}
_FILTERS = frozenset({"sort", "uniq", "wc", "cut", "tr", "less", "more", "column", "cat", "fmt"})


# ---------------------------------------------------------------- actions


def action_features(action: Action) -> tuple[Features, ...]:
    """The units of work of an action (shell line or tool call)."""
    if action.command is not None or action.tool in SHELL_TOOLS:
        return shell_features(action.command or "")
    return tool_features(action.tool, action.arguments)


@lru_cache(maxsize=8192)
def tool_features(tool: str, arguments: str) -> tuple[Features, ...]:
    """Features of a non-shell tool call from its JSON arguments (cached)."""
    if tool in it.SUBMIT_TOOLS:
        return (SUBMIT_FEATURES,)
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    unit = _tool_unit(tool, args)
    if unit is None:
        text = json.dumps(args, sort_keys=True)
        unit = Features(intent=f"tool:{tool}", verb=tool, content=text)
    return (unit,)


def _tool_unit(tool: str, args: dict) -> Features | None:
    if tool in EDITOR_TOOLS:
        return editor_features(args)
    path = str(args.get("file_path") or args.get("path") or "")
    if tool == "Read":
        start = _int(args.get("offset")) or 1
        limit = _int(args.get("limit"))
        rng = LineRange(start, start + limit - 1) if limit else LineRange(start, None)
        return editor_features({"command": "view", "path": path}, ranges=(rng,))
    if tool in ("Edit", "MultiEdit"):
        edits = args.get("edits") if tool == "MultiEdit" else [args]
        edits = edits if isinstance(edits, list) else []
        old = "\n".join(str(e.get("old_string", "")) for e in edits if isinstance(e, dict))
        new = "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, dict))
        return editor_features({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
    if tool == "Write":
        return editor_features({"command": "create", "path": path, "file_text": args.get("content")})
    if tool == "Grep":
        return Features(
            intent=it.SEARCH,
            verb="grep",
            op="content",
            patterns=frozenset({str(args.get("pattern", ""))}),
            files=frozenset({resolve(path or ".", None)}),
        )
    if tool == "Glob":
        return Features(
            intent=it.SEARCH,
            verb="find",
            op="name",
            patterns=frozenset({str(args.get("pattern", ""))}),
            files=frozenset({resolve(path or ".", None)}),
        )
    if tool == "LS":
        return Features(intent=it.LIST, verb="ls", files=frozenset({resolve(path or ".", None)}))
    if tool in ("execute_ipython_cell", "ipython"):
        return Features(intent=it.RUN, verb="python", content=str(args.get("code", "")))
    return None


def editor_features(args: dict, ranges: tuple[LineRange, ...] | None = None) -> Features:
    """Features of a str_replace_editor-style call: view / create / str_replace / insert / undo."""
    op = str(args.get("command") or "view")
    files = frozenset({resolve(str(args.get("path") or ""), None)})
    if op == "view":
        if ranges is None:
            ranges = (_view_range(args.get("view_range")),)
        return Features(intent=it.READ, verb="view", op="view", files=files, ranges=ranges, editor=True)
    if op == "create":
        text = args.get("file_text")
        return Features(
            intent=it.MODIFY, verb="create", op="write", files=files,
            content=str(text) if text is not None else None, editor=True,
        )  # fmt: skip
    if op == "insert":
        line = _int(args.get("insert_line")) or 0
        return Features(
            intent=it.MODIFY, verb="insert", op="insert", files=files,
            ranges=(LineRange(line, line),), content=str(args.get("new_str") or ""), editor=True,
        )  # fmt: skip
    if op == "str_replace":
        return Features(
            intent=it.MODIFY, verb="str_replace", op="edit", files=files,
            old_text=str(args.get("old_str") or ""), content=str(args.get("new_str") or ""),
            editor=True,
        )  # fmt: skip
    return Features(intent=it.MODIFY, verb=op, op=op, files=files, editor=True)


def _view_range(value: object) -> LineRange:
    if isinstance(value, list) and len(value) == 2:
        start, end = _int(value[0]), _int(value[1])
        if start is not None:
            return LineRange(max(start, 1), None if end is None or end < 0 else end)
    return WHOLE


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- shell lines


@lru_cache(maxsize=8192)
def shell_features(command: str) -> tuple[Features, ...]:
    """Units of a shell line; setup-only units (cd, export, echo separators) are dropped."""
    if it.has_submit_marker(command):
        return (SUBMIT_FEATURES,)
    swe_edit = _SWE_EDIT.match(command)
    if swe_edit:
        start, end, body = swe_edit.groups()
        return (
            Features(
                intent=it.MODIFY, verb="edit", op="edit",
                ranges=(LineRange(int(start), int(end)),), content=body,
            ),
        )  # fmt: skip
    script = parse_script(command)
    units = [u for u in (pipeline_features(p) for p in script.pipelines) if u is not None]
    if not units:
        text = collapse_ws(command)
        return (Features(intent=it.RUN, verb=text.split(" ", 1)[0], content=text),) if text else ()
    meaningful = [u for u in units if u.verb not in it.TRIVIAL and u.intent != it.OUTPUT]
    return tuple(meaningful or units)


def pipeline_features(pipe: Pipeline) -> Features | None:
    """One unit for a pipeline: the producer's features, refined by the filters after it."""
    cmds = [_unwrap(c) for c in pipe.commands]
    unit = command_features(cmds[0])
    for cmd in cmds[1:]:
        unit = _apply_filter(unit, cmd)
    return unit


def _unwrap(cmd: SimpleCommand) -> SimpleCommand:
    """`timeout 60 python x.py`, `sudo x`, `env A=1 x` -> the wrapped command."""
    while program(cmd.name) in it.WRAPPERS and cmd.args:
        args = list(cmd.args)
        while args and (args[0].startswith("-") or "=" in args[0]):
            args.pop(0)
        if program(cmd.name) == "timeout" and args:
            args.pop(0)
        if not args:
            break
        cmd = replace(cmd, name=args[0], args=tuple(args[1:]))
    return cmd


def _apply_filter(unit: Features, cmd: SimpleCommand) -> Features:
    prog = program(cmd.name)
    if prog in ("head", "tail", "sed", "awk") and unit.intent == it.READ:
        rng = command_features(cmd).ranges
        if rng and rng != (WHOLE,):
            return replace(unit, ranges=_compose(unit.ranges or (WHOLE,), rng))
        return unit
    if prog in ("grep", "rg"):
        inner = command_features(cmd)
        if unit.intent == it.READ:
            return replace(unit, intent=it.SEARCH, verb="grep", patterns=inner.patterns, ranges=())
        return replace(unit, patterns=unit.patterns | inner.patterns)
    if prog == "xargs":
        inner = command_features(_xargs_inner(cmd))
        if inner.intent in (it.SEARCH, it.MODIFY, it.READ, it.RUN):
            return _narrowed(inner, unit.files or inner.files, unit.patterns)
        return unit
    if prog == "tee" and unit.intent == it.OUTPUT:
        return replace(command_features(cmd), content=unit.content)
    if unit.intent == it.OUTPUT and prog not in _FILTERS:
        inner = command_features(cmd)
        return replace(inner, content=inner.content or unit.content)
    return unit


def _xargs_inner(cmd: SimpleCommand) -> SimpleCommand:
    args = list(cmd.args)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-n", "-I", "-P", "-d", "-L") and args:
            args.pop(0)
    return replace(cmd, name=args[0] if args else "", args=tuple(args[1:]))


def _compose(base: tuple[LineRange, ...], inner: tuple[LineRange, ...]) -> tuple[LineRange, ...]:
    """Lines `inner` (relative to the upstream output) select from upstream range `base`."""
    if len(base) != 1:
        return inner
    b = base[0]
    out = []
    for r in inner:
        if b.start < 0:
            out.append(r)
        elif r.start < 0:  # tail of the upstream range
            out.append(LineRange(r.start, None) if b.end is None else LineRange(max(b.start, b.end + r.start + 1), b.end))
        else:
            start = b.start + r.start - 1
            end = None if r.end is None else b.start + r.end - 1
            if b.end is not None:
                end = b.end if end is None else min(end, b.end)
            out.append(LineRange(start, end))
    return tuple(out)


def command_features(cmd: SimpleCommand) -> Features:
    """Features of one simple command, by program."""
    prog = program(cmd.name)
    handler = _HANDLERS.get(prog)
    if handler is not None:
        return handler(prog, cmd)
    if "/" in cmd.name and prog.endswith((".sh", ".py")) or cmd.name.startswith("./"):
        return _run_script(prog, cmd, resolve(cmd.name, cmd.cwd), cmd.args)
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
        files=_paths(files, cmd.cwd) | (frozenset({write[1]}) if write and intent == it.MODIFY else frozenset()),
        patterns=frozenset(others),
        flags=flags,
        content=cmd.heredoc,
    )


def _echo(prog: str, cmd: SimpleCommand) -> Features:
    text = " ".join(a for a in cmd.args if not re.fullmatch(r"-[neE]+", a))
    write = _write_target(cmd)
    if write:
        return Features(intent=it.MODIFY, verb="write", op=write[0], files=frozenset({write[1]}), content=text)
    return Features(intent=it.OUTPUT, verb=prog, content=text)


def _cat(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags(prog, cmd.args)
    write = _write_target(cmd)
    if write and (cmd.heredoc is not None or not pos):
        return Features(
            intent=it.MODIFY, verb="write", op=write[0], files=frozenset({write[1]}),
            content=cmd.heredoc,
        )  # fmt: skip
    files = _paths(pos, cmd.cwd)
    return Features(intent=it.READ, verb=prog, files=files, ranges=(WHOLE,) if files else (), flags=flags)


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
        return Features(intent=it.MODIFY, verb="sed", op="edit", files=files, old_text=script, content=script)
    ranges = _sed_ranges(script) if "-n" in flags else None
    if ranges:
        return Features(intent=it.READ, verb="sed", files=files, ranges=ranges)
    return Features(intent=it.READ, verb="sed", files=files, patterns=frozenset({script}), ranges=(WHOLE,))


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
    flags, pos = split_flags(prog, cmd.args)
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
            intent=it.SEARCH, verb="awk", op="content", files=paths,
            patterns=frozenset({regex.group(1)}),
        )  # fmt: skip
    return Features(intent=it.READ, verb="awk", files=paths, content=script, ranges=(WHOLE,))


def _grep(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("rg" if prog in ("rg", "ag", "ack") else "grep", cmd.args)
    patterns = [f.split("=", 1)[1] for f in flags if f.startswith("-e=")]
    flags = frozenset(f for f in flags if not f.startswith("-e="))
    if not patterns and pos:
        patterns, pos = [pos[0]], pos[1:]
    recursive = prog != "grep" or bool({"-r", "-R", "--recursive"} & flags)
    files = _paths(pos, cmd.cwd) or (frozenset({resolve(".", cmd.cwd)}) if recursive else frozenset())
    if "-i" in flags:
        patterns = [p.lower() for p in patterns]
    return Features(
        intent=it.SEARCH, verb="grep", op="content", files=files, patterns=frozenset(patterns),
        flags=flags if prog == "grep" else frozenset(),
    )  # fmt: skip


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
                inner = command_features(SimpleCommand(name=body[0], args=tuple(body[1:]), cwd=cmd.cwd))
        elif tok in ("-name", "-iname", "-path", "-ipath", "-regex", "-wholename") and args:
            patterns.add(args.pop(0))
        elif tok.startswith("-") and args and not args[0].startswith(("-", "(", ")", "!")):
            flags.add(f"{tok}={args.pop(0)}")
        elif tok.startswith("-"):
            flags.add(tok)
    files = _paths(starts or ["."], cmd.cwd)
    if inner is not None and inner.intent == it.SEARCH:
        return _narrowed(inner, files, frozenset(patterns))
    intent = it.SEARCH if patterns else it.LIST
    return Features(
        intent=intent, verb="find", op="name" if patterns else None, files=files,
        patterns=frozenset(patterns), flags=frozenset(flags),
    )  # fmt: skip


def _narrowed(inner: Features, files: frozenset[str], names: frozenset[str]) -> Features:
    """`find ... -name X | xargs grep P`: a grep over the found files; names become filters."""
    return replace(inner, files=files, flags=inner.flags | {f"-name={n}" for n in names})


def _python(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("python", cmd.args)
    code = next((f.split("=", 1)[1] for f in flags if f.startswith("-c=")), None)
    module = next((f.split("=", 1)[1] for f in flags if f.startswith("-m=")), None)
    if code is not None:
        return Features(intent=it.RUN, verb="python", content=code)
    if module is not None:
        rest = replace(cmd, name=module, args=tuple(_after_module(cmd.args, module)))
        if module in ("pytest", "pip", "unittest"):
            return command_features(rest)
        return Features(intent=it.RUN, verb="python", patterns=frozenset({module, *pos}))
    if pos and pos[0] != "-":
        return _run_script("python", cmd, resolve(pos[0], cmd.cwd), pos[1:], flags)
    return Features(intent=it.RUN, verb="python", content=cmd.heredoc)


def _after_module(args: tuple[str, ...], module: str) -> list[str]:
    items = list(args)
    for i, a in enumerate(items):
        if a == module or a == "-m" + module:
            return items[i + 1 :]
    return []


def _run_script(
    prog: str, cmd: SimpleCommand, script: str, rest: tuple[str, ...], flags: frozenset[str] = frozenset()
) -> Features:
    more, selectors = split_flags(prog, tuple(rest))
    return Features(
        intent=it.RUN, verb=prog, files=frozenset({script}), patterns=frozenset(selectors),
        flags=flags | more, content=cmd.heredoc,
    )  # fmt: skip


def _pytest(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("pytest", cmd.args)
    files, patterns = set(), set()
    for p in pos:
        path, _, node = p.partition("::")
        files.add(resolve(path, cmd.cwd))
        if node:
            patterns.add(node)
    patterns |= {f.split("=", 1)[1] for f in flags if f.startswith("-k=")}
    flags = frozenset(f for f in flags if not f.startswith("-k="))
    return Features(intent=it.RUN, verb="pytest", files=frozenset(files), patterns=frozenset(patterns), flags=flags)


def _pip(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("pip", cmd.args)
    sub = pos[0] if pos else ""
    files = {resolve(f.split("=", 1)[1], cmd.cwd) for f in flags if f[:3] in ("-e=", "-r=")}
    flags = frozenset(f for f in flags if f[:3] not in ("-e=", "-r="))
    intent = it.RUN if sub in ("install", "uninstall", "download") else it.INFO
    return Features(
        intent=intent, verb="pip", op=sub, files=frozenset(files),
        patterns=frozenset(p.lower() for p in pos[1:]), flags=flags,
    )  # fmt: skip


def _git(prog: str, cmd: SimpleCommand) -> Features:
    args = list(cmd.args)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-C", "-c") and args:
            args.pop(0)
    sub = args.pop(0) if args else ""
    if sub == "grep":
        unit = _grep("grep", replace(cmd, name="grep", args=tuple(args)))
        return replace(unit, files=unit.files or frozenset({resolve(".", cmd.cwd)}), git="grep")
    flags, pos = split_flags("git", tuple(args))
    if sub in ("stash", "remote", "submodule", "worktree", "branch") and pos and not pos[0].startswith("-"):
        sub, pos = f"{sub} {pos[0]}", pos[1:]
    files = _paths([p for p in pos if not _REF.fullmatch(p)], cmd.cwd)
    return Features(intent=it.VCS, verb="git", git=sub, files=files, flags=flags)


def _swe_open(prog: str, cmd: SimpleCommand) -> Features:
    pos = list(cmd.args)
    if prog == "goto" or not pos:
        line = _int(pos[0]) if pos else None
        rng = LineRange(max(1, line - 50), line + 50) if line else WHOLE
        return Features(intent=it.READ, verb="open", ranges=(rng,))
    line = _int(pos[1]) if len(pos) > 1 else None
    rng = LineRange(max(1, line - 50), line + 50) if line else LineRange(1, 100)
    return Features(intent=it.READ, verb="open", files=_paths(pos[:1], cmd.cwd), ranges=(rng,))


def _swe_search(prog: str, cmd: SimpleCommand) -> Features:
    pos = list(cmd.args)
    pattern = frozenset(pos[:1])
    if prog == "find_file":
        where = _paths(pos[1:] or ["."], cmd.cwd)
        return Features(intent=it.SEARCH, verb="find", op="name", patterns=pattern, files=where)
    where = _paths(pos[1:] or (["."] if prog == "search_dir" else []), cmd.cwd)
    return Features(intent=it.SEARCH, verb="grep", op="content", patterns=pattern, files=where)


def _editor_cli(prog: str, cmd: SimpleCommand) -> Features:
    """`str_replace_editor view /testbed/x.py --view_range 1 50` (SWE-agent 1.x action text)."""
    args: dict[str, object] = {}
    pos: list[str] = []
    items = list(cmd.args)
    while items:
        tok = items.pop(0)
        if tok == "--view_range" and len(items) >= 2:
            args["view_range"] = [items.pop(0), items.pop(0)]
        elif tok.startswith("--") and items:
            args[tok[2:]] = items.pop(0)
        else:
            pos.append(tok)
    args.setdefault("command", pos[0] if pos else "view")
    args.setdefault("path", resolve(pos[1], cmd.cwd) if len(pos) > 1 else "")
    return editor_features(args)


def _swe_create(prog: str, cmd: SimpleCommand) -> Features:
    return Features(intent=it.MODIFY, verb="create", op="write", files=_paths(cmd.args[:1], cmd.cwd))


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
    "python": _python,
    "pytest": _pytest,
    "pip": _pip,
    "git": _git,
    "open": _swe_open,
    "goto": _swe_open,
    "find_file": _swe_search,
    "search_dir": _swe_search,
    "search_file": _swe_search,
    "str_replace_editor": _editor_cli,
    "create": _swe_create,
    "submit": lambda prog, cmd: SUBMIT_FEATURES,
}
