"""Report plots as SVG files in OUT/plots/, drawn from the Parquet tables.

The data behind each plot comes from a small pure-ish function that tests can check exactly;
builder.report.svg turns it into SVG text with no plotting library.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import polars as pl

from builder.ingest.instances import run_instance_ids
from builder.report.build import STEP_KEY, _write_atomic, scan_table
from builder.report.svg import bar_chart, histogram

IntentOf = Callable[[str | None], str]
MAX_BARS = 40  # beyond this many trajectories, a histogram reads better than bars
# what an empty plot is titled: its file name, spelled out
TITLES = ("compression ratio", "pass rate by intent", "tokens saved per trajectory")


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
    """Trajectory -> tokens saved on its steps (best row per step, builder.report.savings)."""
    from builder.report.savings import best_rows_expr

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
    drawn = [
        ("compression_ratio.svg", ratios_svg(compression_ratios(out_dir))),
        ("pass_rate_by_intent.svg", pass_rates_svg(pass_rates_by_intent(out_dir, intent_of))),
        (
            "tokens_saved_per_trajectory.svg",
            saved_svg(tokens_saved_per_trajectory(out_dir), run_instance_ids(out_dir)),
        ),
    ]
    paths = []
    for name, svg in drawn:
        path = out_dir / "plots" / name
        _write_atomic(path, svg)
        paths.append(path)
    return paths


def ratios_svg(ratios: list[float]) -> str:
    return histogram(
        ratios,
        bins=20,
        value_range=(0.0, max(1.0, *ratios)) if ratios else None,
        title=f"Compression ratio of selected rows (n={len(ratios)})" if ratios else TITLES[0],
        xlabel="rendered tokens / raw tokens (lower is more compressed)",
        ylabel="selected rows",
        color="#4c72b0",
    )


def pass_rates_svg(rates: dict[str, tuple[int, int]]) -> str:
    return bar_chart(
        list(rates),
        [passed / judged if judged else 0.0 for passed, judged in rates.values()],
        notes=[f"{passed}/{judged}" for passed, judged in rates.values()],
        y_max=1.1,
        rotation=30,
        title="Gate pass rate by action intent" if rates else TITLES[1],
        xlabel="intent of the command whose output was compressed",
        ylabel="pass rate of judged candidates",
        color="#55a868",
    )


def saved_svg(saved: dict[str, int], instances: dict[str, str] | None = None) -> str:
    """Bars labelled by task instance where the trajectory has one (else its id)."""
    title = f"Tokens saved per trajectory (total {sum(saved.values()):,})" if saved else TITLES[2]
    if len(saved) > MAX_BARS:
        return histogram(
            list(saved.values()),
            bins=30,
            title=title,
            xlabel="tokens saved",
            ylabel="trajectories",
            color="#c44e52",
        )
    names = instances or {}
    return bar_chart(
        [names.get(tid, tid) for tid in saved],
        list(saved.values()),
        rotation=60,
        label_size=7,
        title=title,
        xlabel="trajectory (its task instance where recorded)",
        ylabel="tokens saved",
        color="#c44e52",
    )
