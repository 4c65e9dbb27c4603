"""A shell line as a sequence of canonical units of work: what the strict similarity compares.

A unit is one pipeline: a key (everything that decides what it does, `commands.command_key`
for each command, plus wrappers and environment) and, where only part of an output is shown,
a view: the lines of a file a read shows (`nl -ba f | sed -n 10,40p`, `head -n 50 f`, an
editor view) or the lines of an output a trailing `| head -20` / `| tail -5` keeps. Two units
are the same work when their keys are equal; their views then say how much of the same lines
both show. Setup commands (`cd`, which the parser folds into the paths of later commands,
`export`, which goes into their environment, `set`, `source`, `sleep`) are not units, nor are
`echo` separators in a line that does anything else.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from builder.similarity import intent as it
from builder.similarity.bashparse import NAVIGATION, Pipeline, SimpleCommand, parse_script
from builder.similarity.code import text_key
from builder.similarity.commands import command_key
from builder.similarity.effects import without_repeated_effects
from builder.similarity.features import pipeline_features
from builder.similarity.flags import shown_flags
from builder.similarity.heredocs import as_bash_reads
from builder.similarity.normalize import collapse_ws, program, resolve, split_flags
from builder.similarity.programs import command_features
from builder.similarity.pythonpath import python_env
from builder.similarity.records import WHOLE, LineRange, Unit
from builder.similarity.refusals import refusal
from builder.similarity.swe_commands import swe_edit_call

SETUP = frozenset({"export", "set", "source", ".", "true", ":", "clear", "sleep", "unset"})
# setup commands that leave the shell as it was (the others change what later commands see)
_NO_STATE = frozenset({"true", ":", "clear", "sleep"})
_READERS = frozenset(
    {"cat", "nl", "head", "tail", "sed", "awk", "gawk", "less", "more", "bat", "open", "goto",
     "str_replace_editor"}
)  # fmt: skip
_PAGERS = frozenset({"less", "more", "cat"})
_SILENT_WRAPPERS = frozenset({"sudo", "time"})


def _unwrap(cmd: SimpleCommand) -> tuple[SimpleCommand, tuple[str, ...], tuple[str, ...]]:
    """(the wrapped command, the wrappers that change it (`timeout 60`, `env -i`), the
    environment set inline or by `env`). `sudo` changes nothing in an agent's sandbox, and
    `time` only adds its timing report after what the command prints (bash's `time`
    keyword and GNU time), so neither is part of the key (round 3 design pair sympy-13878:
    `python3 debug_uniformsum_2.py` and `time python3 ...` log the same lines)."""
    wrappers: list[str] = []
    env = list(cmd.env)
    while program(cmd.name) in it.WRAPPERS and cmd.args:
        prog, args = program(cmd.name), list(cmd.args)
        taken = []
        while args and (args[0].startswith("-") or (prog == "env" and "=" in args[0])):
            token = args.pop(0)
            if prog == "env" and "=" in token and not token.startswith("-"):
                env.append(token)
            else:
                taken.append(token)
        if prog == "timeout" and args:
            taken.append(args.pop(0))
        if not args:
            break
        if prog not in _SILENT_WRAPPERS or (prog == "time" and taken):
            wrappers.append(" ".join([prog, *taken]))  # `time -o F`: a file written
        cmd = replace(cmd, name=args[0], args=tuple(args[1:]))
    return cmd, tuple(wrappers), tuple(env)


def _read(pipe: Pipeline, env: tuple[str, ...]) -> Unit | None:
    """A pipeline that only shows lines of files (`cat`, `nl`, `sed -n`, `head`, `awk NR`,
    editor views, in any composition): the files and how they are shown, and which lines."""
    first, wrappers, inline = _unwrap(pipe.commands[0])
    if program(first.name) not in _READERS or any(_unwrap(c)[1] for c in pipe.commands[1:]):
        return None
    unit = pipeline_features(pipe)
    if unit is None or unit.intent != it.READ or unit.stages or unit.end:
        return None
    if unit.editor and unit.verb != "view":
        return None
    key = read_key(
        tuple(sorted(unit.files)),
        tuple(sorted(unit.patterns)),
        unit.content,
        frozenset(shown_flags(unit.verb, unit.flags)),
        unit.sink,
        wrappers,
        tuple(sorted(set(env + inline))),
    )
    return Unit("read", key, unit.ranges or (WHOLE,))


def read_key(
    files: tuple[str, ...],
    patterns: tuple[str, ...] = (),
    script: str | None = None,
    shown: frozenset[str] = frozenset(),
    sink: str | None = None,
    wrappers: tuple[str, ...] = (),
    env: tuple[str, ...] = (),
) -> tuple:
    """The identity of a read: which files, filtered how (a `sed`/`awk` script, `head -c`),
    shown where; which lines is its view. Editor views build the same key."""
    return ("read", files, patterns, script, shown, sink, wrappers, env)


def _window(cmd: SimpleCommand) -> tuple[LineRange, ...] | None:
    """The lines a trailing `head`/`tail` keeps of what comes before it."""
    flags, positional = split_flags(program(cmd.name), cmd.args)
    if positional or any(not f.startswith("-n=") for f in flags):
        return None
    ranges = command_features(cmd).ranges
    return ranges if ranges and ranges != (WHOLE,) else None


# programs that read the files named after their own positionals, and how many come first
_FILE_READERS = {"grep": 1, "wc": 0, "sort": 0, "uniq": 0, "cut": 0, "awk": 1, "sed": 1}


def _cat_into(commands: list[SimpleCommand]) -> list[SimpleCommand]:
    """`cat f | grep x` is `grep x f` (the same lines reach the same program)."""
    if len(commands) < 2 or program(commands[0].name) != "cat" or commands[0].heredoc:
        return commands
    flags, files = split_flags("cat", commands[0].args)
    consumer = commands[1]
    prog = program(consumer.name)
    if flags or len(files) != 1 or commands[0].redirects or prog not in _FILE_READERS:
        return commands
    consumer_flags, positional = split_flags(prog, consumer.args)
    takes = _FILE_READERS[prog] - (
        prog == "grep" and any(f.startswith("-e=") for f in consumer_flags)
    )
    if len(positional) != takes or (
        prog == "sed" and any(f.startswith("-i") for f in consumer_flags)
    ):
        return commands
    merged = replace(consumer, args=(*consumer.args, files[0]), cwd=commands[0].cwd)
    return [merged, *commands[2:]]


def pipeline_unit(pipe: Pipeline, env: tuple[str, ...]) -> Unit:
    read = _read(pipe, env)
    if read is not None:
        return read
    commands = _cat_into(list(pipe.commands))
    while len(commands) > 1 and program(commands[-1].name) in _PAGERS and not commands[-1].args:
        commands.pop()  # `| less`, `| cat`: the same lines
    view = None
    if len(commands) > 1 and program(commands[-1].name) in ("head", "tail"):
        view = _window(commands[-1])
        if view is not None:
            commands.pop()
    keys = []
    for cmd in commands:
        inner, wrappers, inline = _unwrap(cmd)
        key = command_key(inner)
        assigned = tuple(sorted(set(python_env(inner, env + inline))))
        keys.append((*key, wrappers, assigned) if wrappers or assigned else key)
    return Unit(keys[0][0], tuple(keys), view)


def _assignment(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    return name, value


def shell_cwd(command: str, cwd: str | None = None) -> str | None:
    """Where a shell that started in `cwd` is after the line (its last `cd` outside a
    subshell), for harnesses that keep one shell across turns."""
    return parse_script(as_bash_reads(command), cwd).cwd


@lru_cache(maxsize=16384)
def shell_units(command: str, cwd: str | None = None) -> tuple[Unit, ...]:
    """The units of a shell line, in order (cached: references meet many candidates), run
    from `cwd` when a kept shell is not at the repository root."""
    swe_edit = swe_edit_call(command)
    if isinstance(swe_edit, str):  # refused before it reads the text
        return (Unit("refused", ("refused", "swe-edit", swe_edit)),)
    if swe_edit is not None:
        start, end, body = swe_edit
        return (Unit("edit", ("edit", "swe-edit", start, end, text_key(body))),)
    script = parse_script(as_bash_reads(command), cwd)
    if not script.ok and (refused := refusal(command)) is not None:
        ran, shown = refused  # bash runs the commands before its syntax error, then stops
        return (*shell_units(ran, cwd), Unit("refused", ("refused", shown)))
    if not script.ok or not script.pipelines:
        text = collapse_ws(command)
        return (Unit("text", ("text", text)),) if text else ()
    env: dict[str, str] = {}
    units = []
    state: list[tuple[str, ...]] = []
    for pipe in script.pipelines:
        first = pipe.commands[0]
        name = program(first.name)
        if len(pipe.commands) == 1 and name == "export":
            assigned = [_assignment(a) for a in first.env if "=" in a]
            env.update(assigned)
            state.append(("export", *sorted(f"{k}={v}" for k, v in assigned)))
            continue
        if len(pipe.commands) == 1 and (name in NAVIGATION or name in SETUP or name == "popd"):
            if name not in _NO_STATE:
                state.append((name, *(resolve(a, first.cwd) for a in first.args)))
            continue
        exported = tuple(f"{k}={v}" for k, v in env.items())
        unit = pipeline_unit(pipe, exported)
        units.append(replace(unit, on_failure=True) if pipe.on_failure else unit)
    if not units and state:  # only the shell's state changes: that change is the action
        return (Unit("state", ("state", tuple(state))),)
    shown = [u for u in units if u.kind != "output"]
    return without_repeated_effects(tuple(shown if shown else units))
