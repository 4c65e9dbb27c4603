"""SVG building blocks: escaping, number formatting, nice ticks, a plot frame and its axes.

Plots are plain SVG text so a run needs no plotting library (matplotlib cost about 1.5 s per
run in imports and rasterising). Every function is pure and formats numbers with a fixed
precision, so the same data gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape as _escape

WIDTH, HEIGHT = 700, 450
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
CHAR_WIDTH = 0.6  # average glyph width as a fraction of the font size, to size margins
TICK_SIZE, LABEL_SIZE, TITLE_SIZE = 11, 12, 14
INK, GRID, MUTED = "#262626", "#e0e0e0", "#808080"


def escape(text: str) -> str:
    """Text safe inside an element or a double-quoted attribute."""
    return _escape(text, {'"': "&quot;"})


def num(value: float) -> str:
    """A coordinate with two decimals at most: stable bytes, no `-0`."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float) -> float:
    """Rough rendered width, enough to leave room for labels."""
    return len(text) * size * CHAR_WIDTH


def nice_ticks(lo: float, hi: float, *, target: int = 6, integer: bool = False) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) inside [lo, hi]."""
    if not hi > lo:
        return [lo]
    rough = (hi - lo) / max(1, target - 1)
    magnitude = 10 ** math.floor(math.log10(rough))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= rough * 0.75)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + step * 1e-9:
        ticks.append(round(k * step, 10) + 0.0)
        k += 1
    return ticks


def tick_label(value: float, ticks: Sequence[float]) -> str:
    """Thousands separators for whole ticks, otherwise just the decimals the step needs."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    if float(step).is_integer() and float(value).is_integer():
        return f"{int(value):,}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{value:.{decimals}f}"


def shorten(label: str, limit: int = 24) -> str:
    """Long category names cut with an ellipsis (the bar's tooltip keeps the full name)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


@dataclass(frozen=True)
class Frame:
    """The plot area in SVG pixels and the data ranges it shows."""

    left: float
    top: float
    width: float
    height: float
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def x(self, value: float) -> float:
        span = self.x_hi - self.x_lo or 1.0
        return self.left + (value - self.x_lo) / span * self.width

    def y(self, value: float) -> float:
        span = self.y_hi - self.y_lo or 1.0
        return self.bottom - (value - self.y_lo) / span * self.height


def frame_for(
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    y_labels: Sequence[str],
    x_labels: Sequence[str] = (),
    rotation: float = 0.0,
    x_label_size: float = TICK_SIZE,
) -> Frame:
    """The largest plot area that leaves room for the title, axis labels and tick labels."""
    left = 16 + LABEL_SIZE + 10 + max((text_width(s, TICK_SIZE) for s in y_labels), default=0)
    longest = max((text_width(s, x_label_size) for s in x_labels), default=0.0)
    turn = math.radians(rotation)
    tick_height = longest * math.sin(turn) + x_label_size * math.cos(turn)
    bottom = min(HEIGHT * 0.45, 14 + tick_height + 10 + LABEL_SIZE + 10)
    top, right = TITLE_SIZE + 22, 24
    return Frame(left, top, WIDTH - left - right, HEIGHT - top - bottom, *x_range, *y_range)


def text(
    x: float,
    y: float,
    content: str,
    *,
    size: float = TICK_SIZE,
    anchor: str = "middle",
    rotate: float = 0.0,
    fill: str = INK,
    css: str = "",
) -> str:
    """One `<text>`, optionally rotated about its anchor point."""
    attrs = f'x="{num(x)}" y="{num(y)}" font-size="{num(size)}" text-anchor="{anchor}"'
    if rotate:
        attrs += f' transform="rotate({num(rotate)} {num(x)} {num(y)})"'
    if fill != INK:
        attrs += f' fill="{fill}"'
    if css:
        attrs += f' class="{css}"'
    return f"<text {attrs}>{escape(content)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = INK, css: str = "") -> str:
    klass = f' class="{css}"' if css else ""
    return (
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
        f'stroke="{stroke}"{klass}/>'
    )


def axes(
    frame: Frame,
    names: tuple[str, str, str],
    x_ticks: Sequence[tuple[float, str]],
    y_ticks: Sequence[tuple[float, str]],
    *,
    rotation: float = 0.0,
    x_label_size: float = TICK_SIZE,
    grid: bool = False,
) -> list[str]:
    """Title, axis lines, ticks with labels, axis labels. `names` is (title, x label, y label);
    x ticks are at pixel positions (categories have no values), y ticks at data values."""
    title, xlabel, ylabel = names
    out = [text(WIDTH / 2, TITLE_SIZE + 8, title, size=TITLE_SIZE, css="title")]
    for value, label in y_ticks:
        y = frame.y(value)
        if grid:
            out.append(line(frame.left, y, frame.left + frame.width, y, GRID, "grid"))
        out.append(line(frame.left - 5, y, frame.left, y, css="ytick"))
        out.append(
            text(frame.left - 8, y + TICK_SIZE * 0.35, label, anchor="end", css="ytick-label")
        )
    for x, label in x_ticks:
        if grid:
            out.append(line(x, frame.top, x, frame.bottom, GRID, "grid"))
        out.append(line(x, frame.bottom, x, frame.bottom + 5, css="xtick"))
        y = frame.bottom + 8 + x_label_size * 0.8
        anchor = "end" if rotation else "middle"
        out.append(
            text(x, y, label, size=x_label_size, anchor=anchor, rotate=-rotation, css="xtick-label")
        )
    out.append(line(frame.left, frame.top, frame.left, frame.bottom, css="axis"))
    out.append(line(frame.left, frame.bottom, frame.left + frame.width, frame.bottom, css="axis"))
    out.append(
        text(frame.left + frame.width / 2, HEIGHT - 12, xlabel, size=LABEL_SIZE, css="x-axis-label")
    )
    middle = frame.top + frame.height / 2
    out.append(
        text(16 + LABEL_SIZE * 0.8, middle, ylabel, size=LABEL_SIZE, rotate=-90, css="y-axis-label")
    )
    return out


def document(title: str, body: Sequence[str]) -> str:
    """The whole SVG file: a white background, then `body` in drawing order."""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" fill="{INK}" role="img" '
        f'aria-label="{escape(title)}">'
    )
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        head,
        f"<title>{escape(title)}</title>",
        '<rect width="100%" height="100%" fill="white"/>',
        *body,
        "</svg>",
    ]
    return "\n".join(lines) + "\n"
