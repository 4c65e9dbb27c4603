"""Ticks, number formatting and escaping behind the SVG charts."""

from __future__ import annotations

import pytest

from builder.report.svg.axes import escape, nice_ticks, num, tick_label


def test_nice_ticks_are_round_steps_inside_the_range() -> None:
    assert nice_ticks(0, 1.1) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert nice_ticks(0, 31.5, integer=True) == [0, 5, 10, 15, 20, 25, 30]
    assert nice_ticks(-0.05, 1.05) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert nice_ticks(410, 1000) == [500, 600, 700, 800, 900, 1000]
    assert nice_ticks(0, 1.05, integer=True) == [0, 1]
    assert nice_ticks(3, 3) == [3]


def test_tick_labels_use_the_steps_precision_and_thousands_separators() -> None:
    assert [tick_label(t, [0, 500]) for t in (0, 2500)] == ["0", "2,500"]
    assert [tick_label(t, [0.0, 0.2]) for t in (0.0, 0.4)] == ["0.0", "0.4"]
    assert tick_label(0.05, [0.0, 0.05]) == "0.05"


def test_numbers_have_stable_short_text() -> None:
    assert [num(v) for v in (1.0, 1.005, 12.3456, -0.001, 0.0)] == ["1", "1", "12.35", "0", "0"]


def test_escape_covers_element_text_and_double_quoted_attributes() -> None:
    assert escape('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
