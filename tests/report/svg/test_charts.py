"""SVG charts read back with xml.etree: bar and point counts, heights and positions against the
data, ticks on the same scale as the bars, escaped labels, "no data" figures."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builder.report.svg import bar_chart, bin_counts, histogram, no_data, scatter
from tests.report.svg.svg_read import NS, bars, parse, points, texts, ticks

ROOT = Path(__file__).resolve().parents[3]
LABELS = {"title": "T", "xlabel": "X", "ylabel": "Y"}


def test_bin_counts_agree_with_numpy_histogram() -> None:
    rng = random.Random(7)
    values = [rng.uniform(-0.2, 1.3) for _ in range(500)] + [0.0, 1.0, 0.5]
    expected, _ = np.histogram(values, bins=20, range=(0.0, 1.0))
    assert bin_counts(values, 20, 0.0, 1.0) == expected.tolist()


def test_histogram_draws_one_bar_per_filled_bin_with_heights_proportional_to_counts() -> None:
    values = [0.05] * 3 + [0.55] + [0.95] * 2
    root = parse(histogram(values, bins=10, value_range=(0.0, 1.0), **LABELS))
    drawn = bars(root)
    assert len(drawn) == 3
    unit = drawn[0].height / 3
    assert [b.height / unit for b in drawn] == pytest.approx([3, 1, 2], abs=0.01)
    bin_width = drawn[0].width
    assert [(b.x - drawn[0].x) / bin_width for b in drawn] == pytest.approx([0, 5, 9], abs=0.01)
    assert len({round(b.y + b.height, 2) for b in drawn}) == 1  # all stand on the x axis
    assert drawn[1].tip == "0.5 to 0.6: 1"


def test_y_ticks_share_the_bars_scale() -> None:
    values = [1.0] * 30 + [2.0] * 10
    root = parse(histogram(values, bins=2, value_range=(1.0, 3.0), **LABELS))
    y_of = {label: y for y, label in ticks(root, "y")}
    assert list(y_of) == ["0", "5", "10", "15", "20", "25", "30"]
    tall, short = bars(root)
    assert tall.y == pytest.approx(y_of["30"], abs=0.01)
    assert short.y == pytest.approx(y_of["10"], abs=0.01)
    assert tall.y + tall.height == pytest.approx(y_of["0"], abs=0.01)


def test_x_ticks_of_a_histogram_sit_at_their_values() -> None:
    root = parse(histogram([0.0, 1.0], bins=2, value_range=(0.0, 1.0), **LABELS))
    x_ticks = ticks(root, "x")
    assert [label for _, label in x_ticks] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    left, right = bars(root)
    assert x_ticks[0][0] == pytest.approx(left.x, abs=0.01)
    assert x_ticks[-1][0] == pytest.approx(right.x + right.width, abs=0.01)


def test_bar_chart_keeps_the_category_order_values_and_notes() -> None:
    labels, values = ["read", "run", "list"], [0.5, 1.0, 0.25]
    root = parse(bar_chart(labels, values, notes=["1/2", "4/4", "1/4"], y_max=1.1, **LABELS))
    drawn = bars(root)
    assert [b.tip for b in drawn] == ["read: 1/2", "run: 4/4", "list: 1/4"]
    assert [b.height / drawn[1].height for b in drawn] == pytest.approx(values, abs=0.01)
    assert [b.x for b in drawn] == sorted(b.x for b in drawn)
    assert [label for _, label in ticks(root, "x")] == labels
    assert texts(root, "note") == ["1/2", "4/4", "1/4"]
    assert [label for _, label in ticks(root, "y")][-1] == "1.0"  # y_max 1.1 leaves headroom


def test_negative_bars_hang_below_the_zero_line() -> None:
    root = parse(bar_chart(["gain", "loss"], [200, -100], **LABELS))
    gain, loss = bars(root)
    assert gain.y + gain.height == pytest.approx(loss.y, abs=0.01)  # both meet at zero
    assert loss.height == pytest.approx(gain.height / 2, abs=0.01)


def test_labels_with_markup_characters_are_escaped() -> None:
    nasty = 'a<b>&"c"'
    svg = bar_chart([nasty], [1.0], title=f"T {nasty}", xlabel=nasty, ylabel=nasty)
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
    root = parse(svg)
    assert texts(root, "title") == [f"T {nasty}"]
    assert texts(root, "xtick-label") == [nasty]
    assert texts(root, "x-axis-label") == texts(root, "y-axis-label") == [nasty]
    assert bars(root)[0].tip == f"{nasty}: 1"


def test_long_category_names_are_shortened_on_the_axis_but_kept_in_the_tooltip() -> None:
    name = "x" * 60
    root = parse(bar_chart([name], [3], rotation=60, **LABELS))
    shown = texts(root, "xtick-label")[0]
    assert len(shown) < len(name) and shown.endswith("…")
    assert bars(root)[0].tip == f"{name}: 3"


def test_scatter_places_one_point_per_item_up_and_right_for_larger_values() -> None:
    items = [("raw", 0.0, 1.0), ("half", 0.5, 0.5), ("<model>", 1.0, 0.0)]
    root = parse(scatter(items, x_range=(0.0, 1.0), y_range=(0.0, 1.0), **LABELS))
    drawn = points(root)
    assert len(drawn) == 3
    xs, ys = [x for x, _ in drawn], [y for _, y in drawn]
    assert xs == sorted(xs) and ys == sorted(ys)  # SVG y grows downwards
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.01)
    assert texts(root, "point-label") == ["raw", "half", "<model>"]
    x_of = {label: x for x, label in ticks(root, "x")}
    assert x_of["0.0"] == pytest.approx(xs[0], abs=0.01)
    assert x_of["1.0"] == pytest.approx(xs[2], abs=0.01)


def test_points_outside_the_given_ranges_widen_them() -> None:
    items = [("expands", -0.5, 0.25), ("ok", 0.5, 0.75)]
    root = parse(scatter(items, x_range=(0.0, 1.0), y_range=(0.0, 1.0), **LABELS))
    (x_out, _), (x_in, _) = points(root)
    x_of = {label: x for x, label in ticks(root, "x")}
    assert x_of["-0.5"] == pytest.approx(x_out, abs=0.01)  # inside the frame, on its tick
    assert x_of["0.5"] == pytest.approx(x_in, abs=0.01)
    assert list(x_of)[-1] == "1.0"


def test_a_value_above_y_max_raises_the_axis() -> None:
    root = parse(bar_chart(["a", "b"], [1.0, 3.0], y_max=1.1, **LABELS))
    y_axis = next(e for e in root.iter(f"{NS}line") if e.get("class") == "axis")
    low, high = bars(root)
    assert high.y == pytest.approx(float(y_axis.get("y1", "nan")), abs=0.01)  # not above it
    assert low.height == pytest.approx(high.height / 3, abs=0.01)


@pytest.mark.parametrize(
    "svg",
    [
        histogram([], bins=10, **LABELS),
        bar_chart([], [], **LABELS),
        scatter([], x_range=(0, 1), y_range=(0, 1), **LABELS),
        no_data("T"),
    ],
    ids=["histogram", "bars", "scatter", "no_data"],
)
def test_empty_data_gives_a_valid_no_data_figure(svg: str) -> None:
    root = parse(svg)
    assert texts(root, "no-data") == ["no data"]
    assert texts(root, "title") == ["T"]
    assert not bars(root) and not points(root)


def test_a_single_value_still_gets_a_bar() -> None:
    drawn = bars(parse(histogram([42.0, 42.0], bins=5, **LABELS)))
    assert len(drawn) == 1 and drawn[0].height > 0 and drawn[0].tip.endswith(": 2")


def test_mismatched_lengths_are_an_error() -> None:
    with pytest.raises(ValueError, match="as many values"):
        bar_chart(["a", "b"], [1.0], **LABELS)


def test_same_data_gives_the_same_bytes_in_another_process() -> None:
    code = (
        "from builder.report.svg import bar_chart, histogram\n"
        "import sys\n"
        "sys.stdout.write(bar_chart(['b', 'a', 'c'], [1 / 3, 2.5, 1e6], title='T', xlabel='X',"
        " ylabel='Y') + histogram([0.1, 0.7, 0.7], bins=7, title='T', xlabel='X', ylabel='Y'))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and next(iter(outputs)).startswith(b"<?xml")


def test_the_run_report_and_eval_plots_import_no_plotting_library() -> None:
    code = (
        "import sys, builder.run.finish, builder.report.plots, builder.evaluate.eval_report\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == "[]"
