"""Reading the SVG plots back with xml.etree, for the tests of builder.report.svg and its users."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

NS = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    tip: str


def parse(svg: str | Path) -> ET.Element:
    """The root element; fails the test if the file is not well-formed XML or not SVG."""
    text = svg.read_text(encoding="utf-8") if isinstance(svg, Path) else svg
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg"
    return root


def bars(root: ET.Element) -> list[Bar]:
    """The bars in drawing order (left to right)."""
    return [
        Bar(
            float(r.get("x", "nan")),
            float(r.get("y", "nan")),
            float(r.get("width", "nan")),
            float(r.get("height", "nan")),
            r.findtext(f"{NS}title", ""),
        )
        for r in root.iter(f"{NS}rect")
        if r.get("class") == "bar"
    ]


def texts(root: ET.Element, css: str) -> list[str]:
    """The content of every `<text>` of that class, in order."""
    return [t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == css]


def points(root: ET.Element) -> list[tuple[float, float]]:
    return [
        (float(c.get("cx", "nan")), float(c.get("cy", "nan")))
        for c in root.iter(f"{NS}circle")
        if c.get("class") == "point"
    ]


def ticks(root: ET.Element, axis: str) -> list[tuple[float, str]]:
    """(pixel position, label) of each tick of the `x` or `y` axis."""
    marks = [line for line in root.iter(f"{NS}line") if line.get("class") == f"{axis}tick"]
    labels = texts(root, f"{axis}tick-label")
    key = "x1" if axis == "x" else "y1"
    return [(float(m.get(key, "nan")), label) for m, label in zip(marks, labels, strict=True)]
