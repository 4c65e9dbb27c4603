"""The chart kinds the reports draw, each a pure function from data to SVG text: a histogram,
a bar chart over categories, labelled points, and a "no data" figure."""

from __future__ import annotations

from collections.abc import Sequence

from builder.report.svg.axes import (
    HEIGHT,
    MUTED,
    TICK_SIZE,
    WIDTH,
    Frame,
    axes,
    document,
    escape,
    frame_for,
    line,
    nice_ticks,
    num,
    shorten,
    text,
    tick_label,
)

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def bin_counts(values: Sequence[float], bins: int, lo: float, hi: float) -> list[int]:
    """Counts in `bins` equal bins over [lo, hi]; the last bin holds `hi`, values outside
    are left out (as numpy.histogram does)."""
    counts = [0] * bins
    width = (hi - lo) / bins
    for value in values:
        if lo <= value <= hi:
            counts[min(bins - 1, int((value - lo) / width))] += 1
    return counts


def _value_range(lo: float, hi: float, pad: float = 0.05) -> tuple[float, float]:
    """[lo, hi] padded at the ends that are not zero, so bars start on the axis."""
    if hi <= lo:
        return (lo - 0.5, hi + 0.5) if lo else (0.0, 1.0)
    span = hi - lo
    return (lo - span * pad if lo < 0 else lo, hi + span * pad if hi > 0 else hi)


def _cover(bounds: tuple[float, float], values: Sequence[float]) -> tuple[float, float]:
    """`bounds` widened to hold `values`, with a margin of 5% of the span where it grew."""
    lo, hi = min(bounds[0], *values), max(bounds[1], *values)
    margin = (hi - lo) * 0.05
    return (lo - margin if lo < bounds[0] else lo, hi + margin if hi > bounds[1] else hi)


def _y_ticks(frame: Frame, integer: bool = False) -> list[tuple[float, str]]:
    ticks = nice_ticks(frame.y_lo, frame.y_hi, integer=integer)
    return [(t, tick_label(t, ticks)) for t in ticks]


def _x_ticks(frame: Frame) -> list[tuple[float, str]]:
    """Value ticks along x, at their pixel positions."""
    ticks = nice_ticks(frame.x_lo, frame.x_hi)
    return [(frame.x(t), tick_label(t, ticks)) for t in ticks]


def _labels(lo: float, hi: float, integer: bool = False) -> list[str]:
    ticks = nice_ticks(lo, hi, integer=integer)
    return [tick_label(t, ticks) for t in ticks]


def _bar(x: float, width: float, y0: float, y1: float, color: str, tip: str) -> str:
    top, height = min(y0, y1), abs(y1 - y0)
    return (
        f'<rect class="bar" x="{num(x)}" y="{num(top)}" width="{num(width)}" '
        f'height="{num(height)}" fill="{color}"><title>{escape(tip)}</title></rect>'
    )


def histogram(
    values: Sequence[float],
    *,
    bins: int,
    title: str,
    xlabel: str,
    ylabel: str,
    value_range: tuple[float, float] | None = None,
    color: str = PALETTE[0],
) -> str:
    """Counts of `values` in equal bins, one bar per bin (empty bins draw no bar)."""
    if not values:
        return no_data(title)
    lo, hi = value_range or (min(values), max(values))
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts = bin_counts(values, bins, lo, hi)
    y_range = _value_range(0, max(counts))
    frame = frame_for((lo, hi), y_range, y_labels=_labels(*y_range, integer=True))
    body = []
    width = (hi - lo) / bins
    for i, count in enumerate(counts):
        if count:
            left, right = frame.x(lo + i * width), frame.x(lo + (i + 1) * width)
            tip = f"{lo + i * width:.4g} to {lo + (i + 1) * width:.4g}: {count}"
            body.append(_bar(left, right - left, frame.y(0), frame.y(count), color, tip))
    body += axes(frame, (title, xlabel, ylabel), _x_ticks(frame), _y_ticks(frame, integer=True))
    return document(title, body)


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    notes: Sequence[str] | None = None,
    y_max: float | None = None,  # top of the y axis, unless a value is higher
    rotation: float = 0.0,
    label_size: float = TICK_SIZE,
    color: str = PALETTE[0],
) -> str:
    """One bar per category, in the given order; `notes` are written above the bars."""
    if len(labels) != len(values) or (notes is not None and len(notes) != len(values)):
        raise ValueError("bar_chart needs as many values (and notes) as labels")
    if not labels:
        return no_data(title)
    lo, hi = _value_range(min(0.0, *values), max(0.0, *values))
    hi = max(y_max, *values) if y_max is not None else hi
    shown = [shorten(label) for label in labels]
    y_labels = _labels(lo, hi)
    frame = frame_for(
        (0, len(labels)),
        (lo, hi),
        y_labels=y_labels,
        x_labels=shown,
        rotation=rotation,
        x_label_size=label_size,
    )
    body = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        left, right = frame.x(i + 0.1), frame.x(i + 0.9)
        tip = f"{label}: {notes[i] if notes else f'{value:,.4g}'}"
        body.append(_bar(left, right - left, frame.y(0), frame.y(value), color, tip))
        if notes:
            top = frame.y(max(0.0, value)) - 4
            body.append(text(frame.x(i + 0.5), top, notes[i], size=9, css="note"))
    if lo < 0:
        body.append(line(frame.left, frame.y(0), frame.left + frame.width, frame.y(0), MUTED))
    x_ticks = [(frame.x(i + 0.5), label) for i, label in enumerate(shown)]
    body += axes(
        frame,
        (title, xlabel, ylabel),
        x_ticks,
        _y_ticks(frame),
        rotation=rotation,
        x_label_size=label_size,
    )
    return document(title, body)


def scatter(
    points: Sequence[tuple[str, float, float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
) -> str:
    """Labelled points (label, x, y) on a grid, one colour per point in order. The ranges
    grow to take in points outside them (say, a compressor that adds tokens)."""
    if not points:
        return no_data(title)
    x_range = _cover(x_range, [x for _, x, _ in points])
    y_range = _cover(y_range, [y for _, _, y in points])
    frame = frame_for(x_range, y_range, y_labels=_labels(*y_range))
    body = axes(frame, (title, xlabel, ylabel), _x_ticks(frame), _y_ticks(frame), grid=True)
    for i, (label, x, y) in enumerate(points):
        cx, cy = frame.x(x), frame.y(y)
        color = PALETTE[i % len(PALETTE)]
        body.append(
            f'<circle class="point" cx="{num(cx)}" cy="{num(cy)}" r="5" fill="{color}">'
            f"<title>{escape(f'{label}: x={x:.3f}, y={y:.3f}')}</title></circle>"
        )
        body.append(text(cx + 7, cy - 7, label, size=10, anchor="start", css="point-label"))
    return document(title, body)


def no_data(title: str) -> str:
    """A figure that says there was nothing to draw, under the plot's title."""
    body = [
        text(WIDTH / 2, 30, title, size=14, css="title"),
        text(WIDTH / 2, HEIGHT / 2, "no data", size=20, fill=MUTED, css="no-data"),
    ]
    return document(title, body)
