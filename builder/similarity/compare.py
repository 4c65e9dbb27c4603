"""Pluggable action similarity: is the agent's next action still "the same" under compression?

Three measures, by name (`get_similarity`):
- `exact`: tool, arguments and command byte-equal.
- `normalized`: equal after lexical normalisation (`normalize.action_key`).
- `semantic`: the reference pipeline's measure. Equal after whitespace collapse is 1.0; else
  both actions become units of work (`features.action_features`) and are compared on evidence.

Semantic scoring of two units: intent agreement counts 0.3, the remaining 0.7 is a weighted mean
over the evidence either side has (files, patterns, line ranges, inline content, edit anchor,
git subcommand and revisions, downstream filters, output redirects, flags of the same program).
A decisive mismatch caps the score below the gate threshold: intents of the same group (read vs
search) cap at 0.5, of different groups at 0.25; different files (whole paths, resolved against
`cd`), disjoint line ranges, unrelated patterns or written content, another git subcommand,
other git revisions or view options, other filters (`| wc -l`), another stdout target
(`> out.txt`), other flags that change what is shown (`ls -R`, `grep -l`) or another kind of
change cap at 0.5. Submit vs non-submit is 0.

Multi-command lines (`&&`, `;`, newlines) are aligned, not reduced to one command: units are
paired greedily by similarity and the score is the sum over pairs divided by the larger unit
count, so an extra or missing command costs its share. Setup units (`cd`, `export`, echo
separators) are dropped first; a pipeline is one unit whose filters are kept as stages.

Editor tool calls (str_replace_editor, Claude Read/Edit/Write) compared with each other are
field-wise: same command and file required (else 0); views score 0.3 + 0.7 x range overlap
(IoU); edits need the same old text and score 0.3 + 0.7 x new-text agreement, so an unrelated
replacement for the same anchor fails; create/Write score 0.3 + 0.7 x content agreement. Across
tools (bash `cat f` vs editor view f) both sides are mapped to the shared vocabulary (view =
read with a range) and compared like shell units.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from builder.errors import ConfigError
from builder.ingest.formats.base import SHELL_TOOLS
from builder.similarity import intent as it
from builder.similarity.evidence import (
    _tokens,
    change_similarity,
    jaccard,
    path_similarity,
    pattern_similarity,
    range_similarity,
    same_text,
    set_similarity,
    stage_similarity,
    text_similarity,
)
from builder.similarity.features import Features, action_features
from builder.similarity.flags import scope_conflict, shown_flags
from builder.similarity.normalize import action_key, collapse_ws
from schemas.steps import Action

Similarity = Callable[[Action, Action], float]

INTENT_WEIGHT = 0.3
SAME_GROUP_CAP = 0.5  # read vs search, list vs info: neighbours, still not the same action
OTHER_GROUP_CAP = 0.25
MISMATCH_CAP = 0.5
GIT_MISMATCH_CAP = 0.4
WEIGHTS = {
    "files": 0.35,
    "patterns": 0.25,
    "ranges": 0.25,
    "content": 0.25,
    "old_text": 0.3,
    "git": 0.3,
    "revisions": 0.3,
    "stages": 0.25,
    "sink": 0.25,
    "op": 0.2,
    "flags": 0.2,
}
READ_RANGE_WEIGHT = 0.5  # for reads, which lines is most of what the action is
EDIT_ANCHOR = 0.3  # same command, file and anchor: the rest is how much the new text agrees
NEW_TEXT_FLOOR = 0.5  # two changes of one anchor sharing fewer words than this differ
WHOLE_TEXT_FLOOR = 0.6  # whole files written: scripts share boilerplate, so ask for more
# how close file targets must be before the difference is decisive, per intent
FILE_THRESHOLD = {it.SEARCH: 0.3}
# patterns closer than this are the same search / test selection (`sitemap` ~ `sitemaps`, but
# `class DatetimeIndex` is not `DatetimeIndex`); a selector on one side only is a subset run
PATTERN_THRESHOLD = {it.SEARCH: 0.9, it.RUN: 0.9}
DEFAULT_FILE_THRESHOLD = 0.8


# ---------------------------------------------------------------- the three measures


def exact(a: Action, b: Action) -> float:
    """1.0 iff tool, arguments and command are identical."""
    return float(a.tool == b.tool and a.arguments == b.arguments and a.command == b.command)


def normalized(a: Action, b: Action) -> float:
    """1.0 iff equal after whitespace/quoting/flag-order/path-prefix/JSON normalisation."""
    if _is_shell(a) != _is_shell(b):
        return 0.0
    return float(action_key(a) == action_key(b))


def semantic(a: Action, b: Action) -> float:
    """Graded similarity in [0, 1] from parsed features (see module docstring)."""
    if _is_shell(a) and _is_shell(b):
        if collapse_ws(a.command or "") == collapse_ws(b.command or ""):
            return 1.0
    elif a.tool == b.tool and a.arguments == b.arguments:
        return 1.0
    # rounded so that 0.3 + 0.7 * 0.5 meets a 0.65 threshold instead of missing it by 1e-16
    return round(compare_units(action_features(a), action_features(b)), 6)


SIMILARITIES: dict[str, Similarity] = {
    "exact": exact,
    "normalized": normalized,
    "semantic": semantic,
}


def get_similarity(name: str) -> Similarity:
    """The similarity registered under `name`; unknown names are a config error."""
    try:
        return SIMILARITIES[name]
    except KeyError:
        known = ", ".join(sorted(SIMILARITIES))
        raise ConfigError(f"unknown similarity {name!r}: use one of {known}") from None


def _is_shell(action: Action) -> bool:
    return action.command is not None or action.tool in SHELL_TOOLS


# ---------------------------------------------------------------- units


@lru_cache(maxsize=65536)
def compare_units(xs: tuple[Features, ...], ys: tuple[Features, ...]) -> float:
    """Similarity of two unit sequences: submit rule, then greedy one-to-one alignment."""
    if not xs or not ys:
        return float(not xs and not ys)
    x_submit = any(u.intent == it.SUBMIT for u in xs)
    y_submit = any(u.intent == it.SUBMIT for u in ys)
    if x_submit or y_submit:
        return float(x_submit and y_submit)
    if len(xs) == 1 and len(ys) == 1:
        return unit_similarity(xs[0], ys[0])
    pairs = sorted(
        ((unit_similarity(x, y), i, j) for i, x in enumerate(xs) for j, y in enumerate(ys)),
        reverse=True,
    )
    used_x: set[int] = set()
    used_y: set[int] = set()
    total = 0.0
    for score, i, j in pairs:
        if i not in used_x and j not in used_y:
            used_x.add(i)
            used_y.add(j)
            total += score
    return total / max(len(xs), len(ys))


def unit_similarity(x: Features, y: Features) -> float:
    """Similarity of two units of work."""
    if x.editor and y.editor:
        return editor_similarity(x, y)
    cap = 1.0
    if x.intent != y.intent:
        cap = SAME_GROUP_CAP if it.group(x.intent) == it.group(y.intent) else OTHER_GROUP_CAP
    intent = x.intent if x.intent == y.intent else ""
    parts: list[tuple[float, float]] = []
    for weight, value, limit in _evidence(x, y, intent):
        parts.append((weight, value))
        cap = min(cap, limit)
    evidence = sum(w * v for w, v in parts) / sum(w for w, _ in parts) if parts else 1.0
    score = (INTENT_WEIGHT if intent else 0.0) + (1 - INTENT_WEIGHT) * evidence
    return max(0.0, min(score, cap))


def _evidence(x: Features, y: Features, intent: str) -> list[tuple[float, float, float]]:
    """(weight, agreement, cap) per piece of evidence either unit has; cap 1.0 = not decisive."""
    out: list[tuple[float, float, float]] = []

    def add(key: str, value: float, decisive: bool, limit: float = MISMATCH_CAP) -> None:
        out.append((WEIGHTS[key], value, limit if decisive else 1.0))

    if x.files or y.files:
        value = set_similarity(x.files, y.files, path_similarity)
        floor = FILE_THRESHOLD.get(intent, DEFAULT_FILE_THRESHOLD)
        add("files", value, bool(x.files and y.files) and value < floor)
    if x.patterns or y.patterns:
        value = set_similarity(x.patterns, y.patterns, pattern_similarity)
        if intent in (it.SEARCH, it.RUN):  # what is searched for / which tests run: the action
            decisive = value < PATTERN_THRESHOLD[intent]
        else:
            decisive = bool(x.patterns and y.patterns) and value < 0.3
        add("patterns", value, decisive)
    if x.ranges or y.ranges:
        value = range_similarity(x.ranges, y.ranges)
        decisive = value < 0.3 and (intent == it.READ or bool(x.ranges and y.ranges))
        out.append((READ_RANGE_WEIGHT if intent == it.READ else WEIGHTS["ranges"], value, 1.0))
        if decisive:
            out[-1] = (out[-1][0], value, MISMATCH_CAP)
    if x.content is not None or y.content is not None:
        if same_text(x.old_text, y.old_text):  # two edits of one anchor: compare the changes
            value = change_similarity(x.old_text, x.content, y.content)
        else:
            value = text_similarity(x.content, y.content)
        both = x.content is not None and y.content is not None
        floor = NEW_TEXT_FLOOR if x.old_text is not None else WHOLE_TEXT_FLOOR
        add("content", value, intent == it.MODIFY and both and value < floor)
    if x.old_text is not None or y.old_text is not None:
        value = float(same_text(x.old_text, y.old_text))
        add("old_text", value, not value)
    if x.git is not None or y.git is not None:
        value = float(x.git == y.git)
        add("git", value, not value, GIT_MISMATCH_CAP)
    if x.revisions or y.revisions:
        value = float(x.revisions == y.revisions)
        add("revisions", value, not value)
    if x.stages or y.stages:
        value = stage_similarity(x.stages, y.stages)
        add("stages", value, value < 0.8)
    if x.end != y.end:  # the last lines of an output are not its first lines
        add("stages", 0.0, True)
    if x.sink is not None or y.sink is not None:
        value = float(x.sink == y.sink)
        add("sink", value, not value)
    if x.op is not None and y.op is not None:
        value = float(x.op == y.op)
        add("op", value, not value)
    if x.verb == y.verb and (x.flags or y.flags):
        shown = shown_flags(x.verb, x.flags) == shown_flags(y.verb, y.flags)
        shown = shown and not scope_conflict(x.flags, y.flags)
        add("flags", jaccard(x.flags, y.flags), not shown)
    return out


def editor_similarity(x: Features, y: Features) -> float:
    """Field-wise comparison of two editor calls: same command and file, then the details."""
    if x.verb != y.verb or x.files != y.files:
        return 0.0
    if x.verb == "view":
        return INTENT_WEIGHT + (1 - INTENT_WEIGHT) * range_similarity(x.ranges, y.ranges)
    if x.verb == "str_replace":
        if not same_text(x.old_text, y.old_text):
            return 0.0
        change = change_similarity(x.old_text, x.content, y.content)
        return EDIT_ANCHOR + (1 - EDIT_ANCHOR) * change
    if x.verb == "insert":
        near = range_similarity(x.ranges, y.ranges) > 0 or x.ranges == y.ranges
        score = EDIT_ANCHOR + (1 - EDIT_ANCHOR) * text_similarity(x.content, y.content)
        return score if near else min(score, MISMATCH_CAP)
    if x.verb == "create":
        value = text_similarity(x.content, y.content)
        score = EDIT_ANCHOR + (1 - EDIT_ANCHOR) * value
        return score if value >= WHOLE_TEXT_FLOOR else min(score, MISMATCH_CAP)
    return 1.0


def clear_caches() -> None:
    """Drop every parse/feature/comparison cache of the package (memory, cold timings)."""
    from builder.similarity import bashparse, features, normalize

    for fn in (
        bashparse.parse_tree,
        bashparse.parse_script,
        normalize.shell_key,
        normalize._action_key,
        features.shell_features,
        features.tool_features,
        compare_units,
        _tokens,
    ):
        fn.cache_clear()
