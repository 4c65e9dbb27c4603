"""Features of a git command: subcommand, files, and the revisions and options that pick what
it shows (`git show abc1234` is not `git show def5678`, `git diff --cached` is not `git diff`)."""

from __future__ import annotations

import re
from dataclasses import replace

from builder.similarity import intent as it
from builder.similarity.bashparse import SimpleCommand
from builder.similarity.normalize import resolve, split_flags
from builder.similarity.records import Features

_REV = r"(?:HEAD|FETCH_HEAD|ORIG_HEAD|@|[0-9a-f]{7,40}|origin/[\w./-]+|v?\d+\.\d+[\w.-]*)[~^\d]*"
_REF = re.compile(rf"{_REV}|{_REV}?\.\.\.?(?:{_REV})?")
# options that change which changes or which view of them git shows
_VIEW_OPTIONS = {
    "--cached": "--cached",
    "--staged": "--cached",
    "--stat": "--stat",
    "--shortstat": "--shortstat",
    "--numstat": "--numstat",
    "--name-only": "--name-only",
    "--name-status": "--name-status",
    "--summary": "--summary",
    "-p": "-p",
    "--patch": "-p",
    "--all": "--all",
    "--no-patch": "--no-patch",
    "-R": "-R",
}
_TWO_WORD = ("stash", "remote", "submodule", "worktree", "branch")


def _subcommand(cmd: SimpleCommand) -> tuple[str, list[str]]:
    """The git subcommand and its arguments, past git's own options (`-C dir`, `-c k=v`)."""
    args = list(cmd.args)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-C", "-c") and args:
            args.pop(0)
    return (args.pop(0) if args else ""), args


def git_grep_command(cmd: SimpleCommand) -> SimpleCommand | None:
    """`git grep ARGS` as the `grep ARGS` it searches like, for the dispatcher to read."""
    sub, args = _subcommand(cmd)
    return replace(cmd, name="grep", args=tuple(args)) if sub == "grep" else None


def as_git_grep(unit: Features, cmd: SimpleCommand) -> Features:
    """A grep's features as those of `git grep` (no path: the whole worktree)."""
    return replace(unit, files=unit.files or frozenset({resolve(".", cmd.cwd)}), git="grep")


def git_features(prog: str, cmd: SimpleCommand) -> Features:
    """Subcommand, paths, and revisions + view options as `revisions` evidence (`git grep`
    is read as a grep by the dispatcher, `programs.command_features`)."""
    sub, args = _subcommand(cmd)
    counts = [a for a in args if re.fullmatch(r"-\d+", a)]  # `git log -5` = `git log -n 5`
    flags, pos = split_flags("git", tuple(a for a in args if a not in counts))
    flags |= {f"-n={c[1:]}" for c in counts}
    if sub in _TWO_WORD and pos and not pos[0].startswith("-"):
        sub, pos = f"{sub} {pos[0]}", pos[1:]
    refs = {p for p in pos if _REF.fullmatch(p)}
    if sub == "diff":  # `git diff A..B` is `git diff A B` (`...` is the merge base: kept)
        refs = {r for ref in refs for r in _two_dots(ref)}
    views = {_VIEW_OPTIONS[f] for f in flags if f in _VIEW_OPTIONS}
    # no path = the whole worktree, so `git diff` vs `git diff a.py` is a directory vs a file
    files = frozenset(resolve(p, cmd.cwd) for p in pos if p not in refs) or frozenset(
        {resolve(".", cmd.cwd)}
    )
    return Features(
        intent=it.VCS,
        verb="git",
        git=sub,
        files=files,
        flags=flags,
        revisions=frozenset(refs | views),
    )


def _two_dots(ref: str) -> tuple[str, ...]:
    if ".." in ref and "..." not in ref:
        left, right = ref.split("..", 1)
        return (left or "HEAD", right or "HEAD")
    return (ref,)
