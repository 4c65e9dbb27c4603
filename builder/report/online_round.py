"""The report's `round` section: the context a round judged its steps in, and for a deployed
run the deployed compressor's verdict per step (from the `round_steps` table). Absent for the
offline round (raw prefixes, round 0), whose report stays as it was."""

from __future__ import annotations

from typing import Any

import polars as pl

from builder.report.figures import _count


def round_section(round_steps: pl.LazyFrame) -> dict[str, Any] | None:
    """Round, prefix mode and compressor, steps relabelled and skipped, and the deployed
    compressor's pass rate over the steps it changed (judged ones only)."""
    rows = round_steps.collect()
    if rows.is_empty():
        return None
    online = rows.filter((pl.col("round") != 0) | (pl.col("prefix_mode") != "raw"))
    if online.is_empty():
        return None
    first = online.row(0, named=True)
    frame = online.lazy()
    section: dict[str, Any] = {
        "round": first["round"],
        "prefix_mode": first["prefix_mode"],
        "prefix_compressor": first["prefix_compressor"],
        "eligible_steps": online.height,
        "relabelled_steps": _count(frame, pl.col("processed")),
        "skipped_steps": _count(frame, ~pl.col("processed")),
        "steps_with_prefix_replaced": _count(frame, pl.col("prefix_replaced") > 0),
    }
    if first["prefix_mode"] == "deployed":
        judged = _count(frame, pl.col("deployed_passed").is_not_null())
        passed = _count(frame, pl.col("deployed_passed").fill_null(False))
        section["deployed"] = {
            "changed_steps": _count(frame, pl.col("deployed_changed").fill_null(False)),
            "unchanged_steps": _count(frame, ~pl.col("deployed_changed").fill_null(True)),
            "judged_steps": judged,
            "passed_steps": passed,
            "pass_rate": passed / judged if judged else None,
        }
    return section
