"""A trajectory as the turns its environment facts are read from (`similarity.environment`)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import OrderedDict

from builder.ingest.formats.base import FormatAdapter, is_shell
from builder.similarity.actions import action_units
from builder.similarity.canonical import shell_cwd
from builder.similarity.environment import Environment, Turn, digest, facts, strings_in
from builder.similarity.file_texts import content_digest_key, edited, refused_create
from builder.similarity.normalize import strip_root
from builder.similarity.records import Unit
from builder.steps.pairing import acting_turns
from schemas.steps import Action
from schemas.trajectories import TrajectoryRecord

# bash's message when `cd` cannot go there: the shell stays where it was
_FAILED_CD = re.compile(r"\bcd: [^\n]*: (?:No such file or directory|Not a directory)")


def log_turns(traj: TrajectoryRecord, adapter: FormatAdapter) -> tuple[list[int], list[Turn]]:
    """(the message index of each acting turn, the turn: its actions' units and the text of
    the messages answering it), in log order."""
    indices, turns = [], []
    texts: dict[str, str] = {}
    kept = adapter.persistent_shell
    cwd: str | None = None
    for turn in acting_turns(traj, adapter):
        if not turn.actions:
            continue
        answers = [traj.messages[j] for j in turn.observation_indices]
        observation = "\n".join(m.content for m in answers)
        printed = "\n".join(adapter.split_observation(m)[1] for m in answers)
        units: list[Unit] = []
        known: dict[str, str] = {}
        start = cwd
        for action in [] if turn.rejected else turn.actions:  # a rejected turn ran nothing
            if kept and not _FAILED_CD.search(observation):
                cwd = _cwd_after(action, cwd)
            if refused_create(texts, action, observation):
                continue  # it wrote nothing
            action_u = action_units(action, start)
            units += action_u
            change = edited(texts, action)
            if change is None:
                touched = {s for u in action_u if u.kind in ("write", "edit")
                           for s in strings_in(u.key)}  # fmt: skip
                texts = {p: t for p, t in texts.items() if p not in touched}  # not kept
                continue
            path, text = change
            if text is None:
                texts.pop(path, None)
                known.pop(path, None)
            else:
                texts[path] = text
                known[path] = digest(content_digest_key(path, text))
        indices.append(turn.action_index)
        turns.append(Turn(tuple(units), observation, tuple(sorted(known.items())), start, printed))
    return indices, turns


def _cwd_after(action: Action, cwd: str | None) -> str | None:
    if not is_shell(action):
        return cwd
    after = shell_cwd(action.command or "", cwd)
    return None if after is None or strip_root(after) == "." else after


_CACHE: OrderedDict[tuple[str, int, int], tuple[list[int], list[Environment]]] = OrderedDict()


def _environments(
    traj: TrajectoryRecord, adapter: FormatAdapter
) -> tuple[list[int], list[Environment]]:
    """Read once per trajectory: a shard judges its steps one after another."""
    key = (traj.trajectory_id, id(traj), len(traj.messages))
    if key not in _CACHE:
        indices, turns = log_turns(traj, adapter)
        _CACHE[key] = (indices, facts(turns))
        while len(_CACHE) > 8:
            _CACHE.popitem(last=False)
    return _CACHE[key]


def environment_before(
    traj: TrajectoryRecord, adapter: FormatAdapter, message_index: int
) -> Environment:
    """The sandbox as the log shows it once every turn before `message_index` has acted:
    what the step's next action (and any candidate action in its place) runs in."""
    indices, envs = _environments(traj, adapter)
    return envs[bisect_left(indices, message_index)]
