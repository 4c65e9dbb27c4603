"""Pluggable action similarity: is the agent's next action still "the same" under compression?

Three measures, by name (`get_similarity`):
- `exact`: tool, arguments and command byte-equal.
- `normalized`: equal after lexical normalisation (`normalize.action_key`).
- `semantic`: the reference pipeline's measure. Equal after whitespace collapse is 1.0; else
  both actions become units of work (`features.action_features`) and are compared on evidence.

Semantic scoring of two units: intent agreement counts 0.3, the remaining 0.7 is a weighted mean
over the evidence either side has (files, patterns, line ranges, inline content, edit anchor,
git subcommand, sub-kind, flags of the same program). A decisive mismatch caps the score below
the gate threshold: intents of the same group (read vs search) cap at 0.5, of different groups
at 0.25; different files, disjoint line ranges, unrelated patterns or written content, another
git subcommand or another kind of change cap at 0.5. Submit vs non-submit is 0.

Multi-command lines (`&&`, `;`, newlines) are aligned, not reduced to one command: units are
paired greedily by similarity and the score is the sum over pairs divided by the larger unit
count, so an extra or missing command costs its share. Setup units (`cd`, `export`, echo
separators) are dropped first; a pipeline is one unit.

Editor tool calls (str_replace_editor, Claude Read/Edit/Write) compared with each other are
field-wise: same command and file required (else 0); views score 0.3 + 0.7 x range overlap
(IoU); edits need the same old text, new text is a minor 0.3; create needs the same path,
content is a minor 0.3. Across tools (bash `cat f` vs editor view f) both sides are mapped to
the shared vocabulary (view = read with a range) and compared like shell units.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache

from builder.actions import intent as it
from builder.actions.features import WHOLE, Features, LineRange, action_features
from builder.actions.normalize import action_key, collapse_ws
from builder.errors import ConfigError
from builder.formats.base import SHELL_TOOLS
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
    "op": 0.2,
    "flags": 0.1,
}
READ_RANGE_WEIGHT = 0.5  # for reads, which lines is most of what the action is
ONE_SIDED = 0.25  # evidence only one side has
WHOLE_VS_PART = 0.25
# how close file targets must be before the difference is decisive, per intent
FILE_THRESHOLD = {it.SEARCH: 0.3}
DEFAULT_FILE_THRESHOLD = 0.8
_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")


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
    parts: list[tuple[float, float]] = []
    intent = x.intent if x.intent == y.intent else ""

    if x.files or y.files:
        value = set_similarity(x.files, y.files, path_similarity)
        parts.append((WEIGHTS["files"], value))
        if x.files and y.files and value < FILE_THRESHOLD.get(intent, DEFAULT_FILE_THRESHOLD):
            cap = min(cap, MISMATCH_CAP)
    if x.patterns or y.patterns:
        value = set_similarity(x.patterns, y.patterns, pattern_similarity)
        parts.append((WEIGHTS["patterns"], value))
        if x.patterns and y.patterns and value < 0.3:
            cap = min(cap, MISMATCH_CAP)
    if x.ranges or y.ranges:
        value = range_similarity(x.ranges, y.ranges)
        weight = READ_RANGE_WEIGHT if intent == it.READ else WEIGHTS["ranges"]
        parts.append((weight, value))
        if value < 0.3 and (intent == it.READ or (x.ranges and y.ranges)):
            cap = min(cap, MISMATCH_CAP)
    if x.content is not None or y.content is not None:
        value = text_similarity(x.content, y.content)
        parts.append((WEIGHTS["content"], value))
        if intent == it.MODIFY and x.content is not None and y.content is not None and value < 0.35:
            cap = min(cap, MISMATCH_CAP)
    if x.old_text is not None or y.old_text is not None:
        value = float(_same_text(x.old_text, y.old_text))
        parts.append((WEIGHTS["old_text"], value))
        if not value:
            cap = min(cap, MISMATCH_CAP)
    if x.git is not None or y.git is not None:
        value = float(x.git == y.git)
        parts.append((WEIGHTS["git"], value))
        if not value:
            cap = min(cap, GIT_MISMATCH_CAP)
    if x.op is not None and y.op is not None:
        value = float(x.op == y.op)
        parts.append((WEIGHTS["op"], value))
        if not value:
            cap = min(cap, MISMATCH_CAP)
    if x.verb == y.verb and (x.flags or y.flags):
        parts.append((WEIGHTS["flags"], jaccard(x.flags, y.flags)))

    evidence = sum(w * v for w, v in parts) / sum(w for w, _ in parts) if parts else 1.0
    score = (INTENT_WEIGHT if intent else 0.0) + (1 - INTENT_WEIGHT) * evidence
    return max(0.0, min(score, cap))


def editor_similarity(x: Features, y: Features) -> float:
    """Field-wise comparison of two editor calls: same command and file, then the details."""
    if x.verb != y.verb or x.files != y.files:
        return 0.0
    if x.verb == "view":
        return INTENT_WEIGHT + (1 - INTENT_WEIGHT) * range_similarity(x.ranges, y.ranges)
    if x.verb == "str_replace":
        if not _same_text(x.old_text, y.old_text):
            return 0.0
        return 0.7 + 0.3 * text_similarity(x.content, y.content)
    if x.verb == "insert":
        near = range_similarity(x.ranges, y.ranges) > 0 or x.ranges == y.ranges
        return (0.7 if near else 0.3) + 0.3 * text_similarity(x.content, y.content)
    if x.verb == "create":
        return 0.7 + 0.3 * text_similarity(x.content, y.content)
    return 1.0


# ---------------------------------------------------------------- evidence


def set_similarity(
    xs: frozenset[str], ys: frozenset[str], sim: Callable[[str, str], float]
) -> float:
    """Soft F1 of two sets under an element similarity; one-sided evidence is weak."""
    if xs == ys:
        return 1.0
    if not xs or not ys:
        return ONE_SIDED
    forward = sum(max(sim(x, y) for y in ys) for x in xs) / len(xs)
    backward = sum(max(sim(x, y) for x in xs) for y in ys) / len(ys)
    return 0.0 if forward + backward == 0 else 2 * forward * backward / (forward + backward)


def path_similarity(a: str, b: str) -> float:
    """1 for the same path, 0.9 when one is a sub-path suffix of the other, 0.6 for a parent."""
    if a == b:
        return 1.0
    if a.endswith("/" + b) or b.endswith("/" + a):
        return 0.9
    if a == "." or b == "." or a.startswith(b + "/") or b.startswith(a + "/"):
        return 0.6
    return 0.0


def pattern_similarity(a: str, b: str) -> float:
    """Patterns equal modulo escapes/anchors = 1; containment scores by length; else words."""
    a, b = _pattern(a), _pattern(b)
    if a == b:
        return 1.0
    if a and b and (a in b or b in a):
        return 0.5 + 0.5 * min(len(a), len(b)) / max(len(a), len(b))
    return 0.8 * jaccard(frozenset(_WORD.findall(a.lower())), frozenset(_WORD.findall(b.lower())))


def _pattern(p: str) -> str:
    p = p.replace("\\", "").strip()
    return p.strip("^$").strip("*").strip()


def range_similarity(xs: Iterable[LineRange], ys: Iterable[LineRange]) -> float:
    """Overlap (IoU) of the lines two reads show; whole file vs a window is weak evidence."""
    xs, ys = tuple(xs) or (WHOLE,), tuple(ys) or (WHOLE,)
    if set(xs) == set(ys):
        return 1.0
    if WHOLE in xs or WHOLE in ys:
        return WHOLE_VS_PART
    x_tail = all(r.start < 0 for r in xs)
    y_tail = all(r.start < 0 for r in ys)
    if x_tail and y_tail:
        a, b = max(-r.start for r in xs), max(-r.start for r in ys)
        return min(a, b) / max(a, b)
    if any(r.start < 0 for r in xs + ys):
        return 0.0
    horizon = max(r.end or r.start for r in xs + ys) + 100
    a_iv, b_iv = _merge(xs, horizon), _merge(ys, horizon)
    inter = sum(max(0, min(e1, e2) - max(s1, s2) + 1) for s1, e1 in a_iv for s2, e2 in b_iv)
    union = _length(a_iv) + _length(b_iv) - inter
    return inter / union if union else 1.0


def _merge(ranges: tuple[LineRange, ...], horizon: int) -> list[tuple[int, int]]:
    """Sorted disjoint closed intervals; open ends stop at `horizon`."""
    out: list[tuple[int, int]] = []
    for start, end in sorted((r.start, r.end if r.end is not None else horizon) for r in ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _length(intervals: list[tuple[int, int]]) -> int:
    return sum(e - s + 1 for s, e in intervals)


def text_similarity(a: str | None, b: str | None) -> float:
    """Multiset Jaccard of code tokens: cheap, order-free, tolerant of cosmetic edits."""
    if a is None or b is None:
        return float(a is None and b is None)
    if collapse_ws(a) == collapse_ws(b):
        return 1.0
    ca, cb = _tokens(a), _tokens(b)
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 1.0


@lru_cache(maxsize=8192)
def _tokens(text: str) -> Counter[str]:
    return Counter(t.replace('"', "'") for t in _TOKEN.findall(text))


def _same_text(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and collapse_ws(a) == collapse_ws(b)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 1.0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def clear_caches() -> None:
    """Drop every parse/feature/comparison cache of the package (memory, cold timings)."""
    from builder.actions import bashparse, features, normalize

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
