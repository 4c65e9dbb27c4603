"""What an action does, as comparable evidence: intent, files, patterns, line ranges, content.

Every action becomes a tuple of `Features`, one per meaningful unit of work (a pipeline of a
shell line, or one editor call). A pipeline is one unit: `nl -ba f | sed -n 10,20p` reads lines
10-20 of f; `grep -rn x . | head` searches. Editor tool calls map onto the same vocabulary
(view = read with a range, create = write, str_replace = edit) so that `cat -n f | sed -n 1,50p`
and `str_replace_editor view f [1, 50]` can be compared at all.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from builder.ingest.formats.base import is_shell
from builder.similarity import intent as it
from builder.similarity.bashparse import Pipeline, SimpleCommand, parse_script
from builder.similarity.flags import shown_flags
from builder.similarity.normalize import collapse_ws, program, resolve, split_flags
from builder.similarity.programs import command_features, narrowed
from builder.similarity.records import SUBMIT_FEATURES, WHOLE, Features, LineRange
from builder.similarity.swe_commands import swe_edit_call
from builder.similarity.tools import editor_features, tool_features
from schemas.steps import Action

__all__ = [
    "WHOLE",
    "Features",
    "LineRange",
    "action_features",
    "command_features",
    "editor_features",
    "shell_features",
    "tool_features",
]


_FILTERS = frozenset({"sort", "uniq", "wc", "cut", "tr", "less", "more", "column", "cat", "fmt"})
# filters that only truncate, reorder or page what the producer shows: not a different action
_SOFT_FILTERS = frozenset(
    {"head", "tail", "sort", "uniq", "less", "more", "cat", "column", "fmt", "tee", "nl"}
)
_STDOUT_OPS = frozenset({">", ">>", "&>", "&>>", "1>", "1>>", ">|"})


def action_features(action: Action) -> tuple[Features, ...]:
    """The units of work of an action (shell line or tool call)."""
    if is_shell(action):
        return shell_features(action.command or "")
    return tool_features(action.tool, action.arguments)


@lru_cache(maxsize=8192)
def shell_features(command: str) -> tuple[Features, ...]:
    """Units of a shell line; setup-only units (cd, export, echo separators) are dropped."""
    if it.has_submit_marker(command):
        return (SUBMIT_FEATURES,)
    swe_edit = swe_edit_call(command)
    if isinstance(swe_edit, tuple):
        start, end, body = swe_edit
        edit = Features(
            intent=it.MODIFY, verb="edit", op="edit", ranges=(LineRange(start, end),), content=body
        )
        return (edit,)
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
    sink = _stdout_target(cmds[-1])
    if sink is not None and unit.intent not in (it.MODIFY, it.OUTPUT):
        unit = replace(unit, sink=sink)
    return unit


def _stdout_target(cmd: SimpleCommand) -> str | None:
    """Where a command's stdout goes when redirected to a file (`/dev/null` included)."""
    for r in cmd.redirects:
        if r.op in _STDOUT_OPS and r.target and not r.target.isdigit():
            return r.target if r.target.startswith("/dev/") else resolve(r.target, cmd.cwd)
    return None


def _stage(unit: Features, cmd: SimpleCommand) -> Features:
    """A filter that changes what is shown becomes a stage of the unit (compared in order)."""
    prog = program(cmd.name)
    if prog == "tail" and unit.intent in (it.SEARCH, it.LIST):
        # of found things `head` keeps the start the agent sees anyway, `tail` other ones;
        # a run's tail is its summary, mere output shaping
        return replace(unit, end="tail")
    if prog in _SOFT_FILTERS:
        return unit
    flags, pos = split_flags(prog, cmd.args)
    if prog in ("grep", "rg"):
        inner = command_features(cmd)
        shown = "".join(sorted(shown_flags("grep", inner.flags)))
        key = f"grep{shown} " + " ".join(sorted(inner.patterns))
    else:
        key = " ".join([prog, *sorted(flags), *pos])
    return replace(unit, stages=(*unit.stages, key))


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
        return unit if prog in _SOFT_FILTERS else _stage(unit, cmd)
    if prog == "wc" and unit.intent == it.READ:
        return replace(command_features(cmd), files=unit.files)  # `cat f | wc -l` counts f
    if prog in ("grep", "rg"):
        inner = command_features(cmd)
        if unit.intent == it.READ and not unit.stages:
            return replace(unit, intent=it.SEARCH, verb="grep", patterns=inner.patterns, ranges=())
        return _stage(unit, cmd)
    if prog == "xargs":
        inner = command_features(_xargs_inner(cmd))
        if inner.intent in (it.SEARCH, it.MODIFY, it.READ, it.RUN):
            return narrowed(inner, unit.files or inner.files, unit.patterns, unit.flags)
        return unit
    if prog == "tee" and unit.intent == it.OUTPUT:
        return replace(command_features(cmd), content=unit.content)
    if unit.intent == it.OUTPUT and prog not in _FILTERS:
        inner = command_features(cmd)
        return replace(inner, content=inner.content or unit.content)
    if unit.intent == it.OUTPUT:
        return unit
    return _stage(unit, cmd)


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
            out.append(
                LineRange(r.start, None)
                if b.end is None
                else LineRange(max(b.start, b.end + r.start + 1), b.end)
            )
        else:
            start = b.start + r.start - 1
            end = None if r.end is None else b.start + r.end - 1
            if b.end is not None:
                end = b.end if end is None else min(end, b.end)
            out.append(LineRange(start, end))
    return tuple(out)
