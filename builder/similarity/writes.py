"""Keys of commands that change files or submit: heredoc and echo writes, file operations,
submissions."""

from __future__ import annotations

import json
import re

from builder.similarity.argv import Key, flags_of, paths, stdout_target
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.code import content_key, heredoc_text
from builder.similarity.intent import SUBMIT_MARKERS
from builder.similarity.normalize import resolve, split_flags

_UNORDERED_PATHS = frozenset({"rm", "rmdir", "touch", "mkdir", "chmod"})


def write_key(cmd: SimpleCommand, prog: str) -> Key | None:
    """`cat <<EOF > f`, `echo x > f`, `printf ... >> f`, `tee f <<EOF`: the file and what
    ends up in it (Python files by syntax tree, others as text); None when nothing is
    written to a file."""
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


def echo_key(cmd: SimpleCommand) -> Key:
    """Text shown; a harness's submit marker is a submission."""
    text = " ".join(cmd.args)
    if any(marker in text for marker in SUBMIT_MARKERS):
        return ("submit", "marker")
    return ("output", cmd.name, text)


def file_operation_key(cmd: SimpleCommand, prog: str) -> Key:
    """`rm`, `mkdir`, `touch`, `chmod` of a set of paths; `cp`, `mv` in order."""
    flags, positional = flags_of(prog, cmd.args, cmd.cwd)
    targets = paths(positional, cmd.cwd)
    if prog in _UNORDERED_PATHS:
        targets = tuple(sorted(set(targets)))
    return ("edit", prog, flags, targets)


def submit_key(tool: str, payload: dict) -> Key:
    """A submission: what is submitted (SWE-agent's `submit` command and `submit` tool with
    no argument are one action; another CTF flag is another, SWE-agent ctf/crypto/eps)."""
    return ("submit", tool, json.dumps(payload, sort_keys=True))
