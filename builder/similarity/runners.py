"""Features of commands that run code: `python` (script, `-c`, `-m`), `pytest`, `pip`, scripts."""

from __future__ import annotations

from dataclasses import replace

from builder.similarity import intent as it
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.normalize import resolve, split_flags
from builder.similarity.records import Features


def python_module_command(cmd: SimpleCommand) -> SimpleCommand | None:
    """`python -m pytest|pip|unittest ARGS` as the command it runs, for the dispatcher to
    read (`programs.command_features`); None for anything else."""
    flags, _ = split_flags("python", cmd.args)
    if any(f.startswith("-c=") for f in flags):
        return None
    module = next((f.split("=", 1)[1] for f in flags if f.startswith("-m=")), None)
    if module not in ("pytest", "pip", "unittest"):
        return None
    return replace(cmd, name=module, args=tuple(_after_module(cmd.args, module)))


def python_features(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("python", cmd.args)
    code = next((f.split("=", 1)[1] for f in flags if f.startswith("-c=")), None)
    module = next((f.split("=", 1)[1] for f in flags if f.startswith("-m=")), None)
    if code is not None:
        return Features(intent=it.RUN, verb="python", content=code)
    if module is not None:
        return Features(intent=it.RUN, verb="python", patterns=frozenset({module, *pos}))
    if pos and pos[0] != "-":
        return run_script("python", cmd, resolve(pos[0], cmd.cwd), pos[1:], flags)
    return Features(intent=it.RUN, verb="python", content=cmd.heredoc)


def _after_module(args: tuple[str, ...], module: str) -> list[str]:
    items = list(args)
    for i, a in enumerate(items):
        if a == module or a == "-m" + module:
            return items[i + 1 :]
    return []


def run_script(
    prog: str,
    cmd: SimpleCommand,
    script: str,
    rest: tuple[str, ...],
    flags: frozenset[str] = frozenset(),
) -> Features:
    more, selectors = split_flags(prog, tuple(rest))
    selectors = tuple(s for s in selectors if not s.isdigit())  # `-v 2`: a flag's value
    return Features(
        intent=it.RUN,
        verb=prog,
        files=frozenset({script}),
        patterns=frozenset(selectors),
        flags=flags | more,
        content=cmd.heredoc,
    )


def pytest_features(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("pytest", cmd.args)
    files, patterns = set(), set()
    for p in pos:
        path, _, node = p.partition("::")
        files.add(resolve(path, cmd.cwd))
        if node:
            patterns.add(node)
    patterns |= {f.split("=", 1)[1] for f in flags if f.startswith("-k=")}
    flags = frozenset(f for f in flags if not f.startswith("-k="))
    return Features(
        intent=it.RUN,
        verb="pytest",
        files=frozenset(files),
        patterns=frozenset(patterns),
        flags=flags,
    )


def pip_features(prog: str, cmd: SimpleCommand) -> Features:
    flags, pos = split_flags("pip", cmd.args)
    sub = pos[0] if pos else ""
    files = {resolve(f.split("=", 1)[1], cmd.cwd) for f in flags if f[:3] in ("-e=", "-r=")}
    flags = frozenset(f for f in flags if f[:3] not in ("-e=", "-r="))
    intent = it.RUN if sub in ("install", "uninstall", "download") else it.INFO
    return Features(
        intent=intent,
        verb="pip",
        op=sub,
        files=frozenset(files),
        patterns=frozenset(p.lower() for p in pos[1:]),
        flags=flags,
    )
