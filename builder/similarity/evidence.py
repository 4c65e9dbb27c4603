"""Element-level evidence for the semantic similarity: paths, patterns, line ranges, text.

Pure functions, each answering "how much do these two pieces of evidence agree" in [0, 1].
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache

from builder.similarity.normalize import collapse_ws
from builder.similarity.records import WHOLE, LineRange

ONE_SIDED = 0.25  # evidence only one side has
WHOLE_VS_PART = 0.25
DIR_VS_FILE = 0.25  # a directory vs one file in it: a much narrower action
_FILE_LIKE = re.compile(r"\.\w{1,5}$")
_WORD = re.compile(r"\w+")


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
    """Whole paths (already resolved against `cd` and the repository root) are compared.

    1 for the same path, 0.6 for a parent directory, 0.25 for a directory vs a file in it.
    A relative path is a suffix match (0.9)
    of an absolute one only when that absolute path lies outside every known repository root,
    i.e. nothing else resolves it; `__init__.py` vs `django/contrib/sitemaps/__init__.py` are
    two files of the same repository.
    """
    if a == b:
        return 1.0
    if a.startswith("/") != b.startswith("/"):
        absolute, relative = (a, b) if a.startswith("/") else (b, a)
        if absolute.endswith("/" + relative):
            return 0.9
    if a == "." or b == "." or a.startswith(b + "/") or b.startswith(a + "/"):
        inner = b if len(b) > len(a) or a == "." else a
        return DIR_VS_FILE if _FILE_LIKE.search(inner) else 0.6

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
    """Multiset Jaccard of words (identifiers, numbers, keywords): cheap, order-free, blind to
    spacing and punctuation, which would otherwise make any two Python snippets look alike."""
    if a is None or b is None:
        return float(a is None and b is None)
    if collapse_ws(a) == collapse_ws(b):
        return 1.0
    ca, cb = _tokens(a), _tokens(b)
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 1.0


@lru_cache(maxsize=8192)
def _tokens(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text))


def same_text(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and collapse_ws(a) == collapse_ws(b)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 1.0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def stage_similarity(xs: tuple[str, ...], ys: tuple[str, ...]) -> float:
    """Downstream filters compared position by position: `| wc -l` is not `| grep x`."""
    if xs == ys:
        return 1.0
    total = 0.0
    for x, y in zip(xs, ys, strict=False):
        if x == y:
            total += 1.0
        elif x.startswith("grep ") and y.startswith("grep "):
            total += pattern_similarity(x[5:], y[5:])
    return total / max(len(xs), len(ys))


def change_similarity(old: str | None, a: str | None, b: str | None) -> float:
    """How alike two edits of the same anchor are, by the words each adds and removes.

    Whole-text overlap would call `from moto import x` and `from moto.sub import x` 90% alike
    although the edit is exactly that difference; comparing the changes does not.
    """
    if a is None or b is None:
        return float(a is None and b is None)
    if collapse_ws(a) == collapse_ws(b):
        return 1.0
    base = _tokens(old or "")
    ca, cb = _change(base, _tokens(a)), _change(base, _tokens(b))
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 1.0


def _change(base: Counter[str], new: Counter[str]) -> Counter[str]:
    added = {f"+{w}": n for w, n in (new - base).items()}
    removed = {f"-{w}": n for w, n in (base - new).items()}
    return Counter({**added, **removed})
