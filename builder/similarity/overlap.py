"""How much of the same lines two views show: intersection over union of line ranges."""

from __future__ import annotations

from collections.abc import Iterable

from builder.similarity.records import WHOLE, LineRange

WHOLE_VS_PART = 0.25  # all lines vs a window of unknown share: mostly not the same lines


def range_similarity(xs: Iterable[LineRange], ys: Iterable[LineRange]) -> float:
    """Intersection over union of the lines two views show (1 for the same lines). All of
    a file or an output against a part of it is `WHOLE_VS_PART`; the last lines against
    the first lines is 0; two tails compare their lengths."""
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
