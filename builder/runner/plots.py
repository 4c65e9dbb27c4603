"""Report plots as PNG files in OUT/plots/, drawn from the Parquet tables.

The figures are built with `matplotlib.figure.Figure` and the Agg canvas, never pyplot, so
plotting holds no global state and needs no display. The data behind each plot comes from a
small pure-ish function that tests can check exactly.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from builder.runner.report import STEP_KEY, scan_table

IntentOf = Callable[[str | None], str]
MAX_BARS = 40  # beyond this many trajectories, a histogram reads better than bars


def first_word(command: str | None) -> str:
    """Default intent: the program name (first word, without its directory), or `none`."""
    words = (command or "").split()
    if not words:
        return "none"
    return os.path.basename(words[0].rstrip("/")) or words[0]


def compression_ratios(out_dir: Path) -> list[float]:
    """rendered_tokens / raw_tokens of every selected (non-fallback) supervision row."""
    frame = (
        scan_table(out_dir, "supervision")
        .filter(~pl.col("is_fallback") & (pl.col("raw_tokens") > 0))
        .select((pl.col("rendered_tokens") / pl.col("raw_tokens")).alias("ratio"))
        .drop_nulls()
        .collect()
    )
    return frame["ratio"].to_list()


def pass_rates_by_intent(
    out_dir: Path, intent_of: IntentOf = first_word
) -> dict[str, tuple[int, int]]:
    """Intent of the step's command -> (passed, judged) over all judged candidates."""
    commands = scan_table(out_dir, "steps").select(
        *STEP_KEY, pl.col("action").struct.field("command").alias("command")
    )
    rows = (
        scan_table(out_dir, "judgements")
        .filter(~pl.col("is_control"))
        .select(*STEP_KEY, "passed")
        .join(commands, on=STEP_KEY, how="left")
        .group_by("command")
        .agg(pl.col("passed").sum().alias("passed"), pl.len().alias("judged"))
        .collect()
    )
    totals: dict[str, tuple[int, int]] = {}
    for command, passed, judged in rows.iter_rows():
        intent = intent_of(command)
        before = totals.get(intent, (0, 0))
        totals[intent] = (before[0] + int(passed), before[1] + int(judged))
    return dict(sorted(totals.items()))


def tokens_saved_per_trajectory(out_dir: Path) -> dict[str, int]:
    """Trajectory -> tokens saved on its steps (best row per step, builder.runner.savings)."""
    from builder.runner.savings import best_rows_expr

    rows = (
        scan_table(out_dir, "supervision")
        .filter(best_rows_expr())
        .group_by("trajectory_id")
        .agg((pl.col("raw_tokens") - pl.col("rendered_tokens")).sum().alias("saved"))
        .sort(["saved", "trajectory_id"], descending=[True, False])
        .collect()
    )
    return {tid: int(saved or 0) for tid, saved in rows.iter_rows()}


def write_plots(out_dir: Path, *, intent_of: IntentOf = first_word) -> list[Path]:
    """Draw the three report plots into OUT/plots/ and return their paths."""
    out_dir = Path(out_dir)
    folder = out_dir / "plots"
    folder.mkdir(parents=True, exist_ok=True)
    drawn: list[tuple[str, Callable[[Axes, Any], None], Any]] = [
        ("compression_ratio.png", _draw_ratios, compression_ratios(out_dir)),
        ("pass_rate_by_intent.png", _draw_pass_rates, pass_rates_by_intent(out_dir, intent_of)),
        ("tokens_saved_per_trajectory.png", _draw_saved, tokens_saved_per_trajectory(out_dir)),
    ]
    paths = []
    for name, draw, data in drawn:
        figure = Figure(figsize=(7, 4.5), dpi=100, layout="constrained")
        axes = figure.add_subplot()
        if data:
            draw(axes, data)
        else:
            _no_data(axes, name.removesuffix(".png").replace("_", " "))
        paths.append(_save(figure, folder / name))
    return paths


def _draw_ratios(axes: Axes, ratios: list[float]) -> None:
    axes.hist(ratios, bins=20, range=(0.0, max(1.0, max(ratios))), color="#4c72b0")
    axes.set_xlabel("rendered tokens / raw tokens (lower is more compressed)")
    axes.set_ylabel("selected rows")
    axes.set_title(f"Compression ratio of selected rows (n={len(ratios)})")


def _draw_pass_rates(axes: Axes, rates: dict[str, tuple[int, int]]) -> None:
    names = list(rates)
    values = [passed / judged if judged else 0.0 for passed, judged in rates.values()]
    bars = axes.bar(names, values, color="#55a868")
    for bar, (passed, judged) in zip(bars, rates.values(), strict=True):
        top = (bar.get_x() + bar.get_width() / 2, bar.get_height())
        axes.annotate(f"{passed}/{judged}", top, ha="center", va="bottom", fontsize=8)
    axes.set_ylim(0, 1.1)
    axes.set_ylabel("pass rate of judged candidates")
    axes.set_xlabel("intent of the command whose output was compressed")
    axes.set_title("Gate pass rate by action intent")
    axes.tick_params(axis="x", labelrotation=30)


def _draw_saved(axes: Axes, saved: dict[str, int]) -> None:
    if len(saved) <= MAX_BARS:
        axes.bar(list(saved), list(saved.values()), color="#c44e52")
        axes.set_xlabel("trajectory")
        axes.tick_params(axis="x", labelrotation=60, labelsize=7)
    else:
        axes.hist(list(saved.values()), bins=30, color="#c44e52")
        axes.set_xlabel("tokens saved")
    axes.set_ylabel("tokens saved" if len(saved) <= MAX_BARS else "trajectories")
    axes.set_title(f"Tokens saved per trajectory (total {sum(saved.values()):,})")


def _no_data(axes: Axes, title: str) -> None:
    axes.text(0.5, 0.5, "no data", ha="center", va="center", fontsize=20, color="gray")
    axes.set_title(title)
    axes.set_axis_off()


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    figure.savefig(tmp, format="png")
    os.replace(tmp, path)
    return path
