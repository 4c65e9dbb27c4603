"""report.md and the one-line summary: rendering of the figures `report.build_report` computed."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any


def render_markdown(report: Mapping[str, Any]) -> str:
    """A readable summary: one section per report key, tables for nested mappings."""
    lines = ["# nap-builder run report", "", summary_line(report), ""]
    failure = failure_line(report.get("run", {}))
    if failure:
        lines += [f"> **{failure}**", ""]
    for section in ("control", "decontamination"):
        warning = report.get(section, {}).get("warning")
        if warning:
            lines += [f"> **WARNING:** {warning}", ""]
    scalars = {k: v for k, v in report.items() if not isinstance(v, Mapping)}
    for section, value in report.items():
        if isinstance(value, Mapping):
            lines += [f"## {_title(section)}", "", *_md_block(value), ""]
    if scalars:
        lines += ["## other figures", "", *_md_block(scalars), ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip() + "\n"


def summary_line(report: Mapping[str, Any]) -> str:
    """One sentence with the headline figures, for the console and the top of report.md."""
    totals = report.get("totals", {})
    compression = report.get("compression", {})
    ratio = compression.get("token_ratio")
    saved = f", tokens {percent_change(ratio)} on selected steps" if ratio is not None else ""
    cost = report.get("usage", {}).get("cost_usd")
    spent = f", cost ${cost:.4f}" if isinstance(cost, int | float) else ""
    rate = report.get("control", {}).get("pass_rate")
    control = f", control pass rate {rate:.0%}" if isinstance(rate, int | float) else ""
    return (
        f"{totals.get('trajectories', 0)} trajectories, {totals.get('eligible_steps', 0)} eligible "
        f"steps, {totals.get('candidates', 0)} candidates ({totals.get('valid_candidates', 0)} "
        f"valid, {totals.get('passing_candidates', 0)} passing), "
        f"{totals.get('selected_steps', 0)} steps selected "
        f"({report.get('dropped_steps', {}).get('total', 0)} dropped){saved}{control}{spent}."
    )


def failure_line(run: Mapping[str, Any]) -> str | None:
    """The headline of a run that did not finish its shards: how many failed, and why."""
    failed, total = run.get("shards_failed") or 0, run.get("shards_total") or 0
    if not failed:
        return None
    why = "; ".join(run.get("diagnoses") or []) or "see run.log for the errors"
    return (
        f"FAILED: {failed} of {total} shards failed ({why}); run the same command again "
        "to resume them"
    )


def percent_change(ratio: float) -> str:
    """`new/old` as a signed change with one decimal (0.004 -> "-99.6%", 1.0 -> "+0.0%").

    Rounding never reaches -100% (or 0%) unless the change is exactly that: a -99.96% change
    shows as "-99.9%", not as if every token had been removed.
    """
    change = (ratio - 1.0) * 100.0
    shown = round(change, 1)
    if abs(shown) >= 100.0 and abs(change) < 100.0:
        shown = math.copysign(99.9, change)
    if shown == 0.0 and change != 0.0:
        return f"{'-' if change < 0 else '+'}<0.1%"
    return f"{shown:+.1f}%"


def _md_block(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        return [_fmt(value)]
    if not value:
        return ["(none)"]
    if _is_row_table(value):
        return _md_rows(value)
    scalars = {k: v for k, v in value.items() if not isinstance(v, Mapping)}
    nested = {k: v for k, v in value.items() if isinstance(v, Mapping)}
    lines: list[str] = []
    if scalars:
        lines += ["| figure | value |", "| --- | ---: |"]
        lines += [f"| {_title(k)} | {_fmt(v)} |" for k, v in scalars.items()]
        lines.append("")
    for key, sub in nested.items():
        lines += [f"**{_title(key)}**", ""]
        lines += _md_block(sub)
        lines.append("")
    return lines


def _is_row_table(value: Mapping[str, Any]) -> bool:
    rows = list(value.values())
    return bool(rows) and all(
        isinstance(r, Mapping) and not any(isinstance(v, Mapping) for v in r.values()) for r in rows
    )


def _md_rows(rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A mapping name -> {column: value} as one table (e.g. usage per model)."""
    columns: list[str] = []
    for row in rows.values():
        columns += [c for c in row if c not in columns]
    lines = [
        "| name | " + " | ".join(_title(c) for c in columns) + " |",
        "| --- |" + " ---: |" * len(columns),
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(row.get(c)) for c in columns) + " |")
    return lines


def _title(key: str) -> str:
    return str(key).replace("_", " ")


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ")
