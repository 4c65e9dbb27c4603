"""The run report: figures computed from the Parquet tables in OUT, as JSON and markdown.

Everything is derived from the tables (not from counters kept during the run), so a resumed
run reports the same figures as an uninterrupted one. Request usage and a few figures only the
runner knows come in through `usage` and `extra`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from builder.nap.control import JUDGED, control_summary
from builder.report.decontamination import decontamination_section
from builder.report.figures import (
    _by_source,
    _compression,
    _count,
    _dropped_steps,
    _early_exit,
    _reference_stability,
    _totals,
    _usage,
)
from builder.report.markdown import render_markdown
from builder.report.online_round import round_section
from builder.report.tables import SCHEMAS, STEP_KEY, loaded, scan_table

__all__ = ["STEP_KEY", "build_report", "json_safe", "loaded", "scan_table", "write_report"]


def build_report(
    out_dir: Path,
    *,
    usage: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    control_floor: float = 0.5,
    control_mode: str = JUDGED,
) -> dict[str, Any]:
    """Every figure of the report as plain JSON-able data.

    `usage` is the request accounting (requests, tokens, cached tokens, cost, cache hits, errors
    by kind, possibly per model or role) and is reported as given. Each key of `extra` is added
    at the top level; a mapping is merged into the section of that name. Control rows of the
    judgements table make the `control` section and count in no candidate figure.
    """
    with loaded(out_dir):
        return _build(out_dir, usage, extra, control_floor, control_mode)


def _build(
    out_dir: Path,
    usage: Mapping[str, Any] | None,
    extra: Mapping[str, Any] | None,
    control_floor: float,
    control_mode: str,
) -> dict[str, Any]:
    tables = {name: scan_table(out_dir, name) for name in SCHEMAS}
    control = tables["judgements"].filter(pl.col("is_control"))
    tables["judgements"] = tables["judgements"].filter(~pl.col("is_control"))
    report: dict[str, Any] = {
        "control": control_summary(
            _count(control), _count(control, pl.col("passed")), control_floor, control_mode
        ),
        "totals": _totals(tables),
        "decontamination": decontamination_section(out_dir),
        "dropped_steps": _dropped_steps(tables),
        "compression": _compression(tables),
        "by_source": _by_source(tables),
        "reference_stability": _reference_stability(tables["references"]),
        "early_exit": _early_exit(tables),
        "usage": _usage(usage),
    }
    online = round_section(tables["round_steps"])
    if online is not None:
        report["round"] = online
    for key, value in (extra or {}).items():
        if isinstance(value, Mapping) and isinstance(report.get(key), dict):
            report[key].update(value)
        else:
            report[key] = value
    return json_safe(report)


def write_report(out_dir: Path, report: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write OUT/report.json and OUT/report.md atomically; returns both paths."""
    out_dir = Path(out_dir)
    json_path, md_path = out_dir / "report.json", out_dir / "report.md"
    _write_atomic(json_path, json.dumps(report, indent=2, sort_keys=False) + "\n")
    _write_atomic(md_path, render_markdown(report))
    return json_path, md_path


def json_safe(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists, other objects strings."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float):
        return value
    return str(value)  # paths, enums and the like


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
