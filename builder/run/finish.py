"""The end of a run: report.json, report.md and plots from the tables and the shard markers."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from pathlib import Path
from typing import Any

from builder.llm.budget import budget_section
from builder.nap.step import NapSettings
from builder.run.result import RunResult
from builder.run.shards import read_json


def finish_report(
    out_dir: Path,
    result: RunResult,
    started: float | None = None,
    settings: NapSettings | None = None,
) -> dict[str, Any]:
    """report.json, report.md and plots from the tables and the markers of every shard.

    The figures and plots are computed first, then the run's timing (`result.seconds` since
    `started`, a `time.perf_counter()` value, and `stage_seconds["report"]`) is set, and only
    then is the report written, so report.json and report.md carry the full run time.
    """
    from builder.report.build import build_report, json_safe, loaded, write_report
    from builder.report.plots import write_plots

    report_started = time.perf_counter()

    markers = [read_json(p) for p in sorted((out_dir / "_state" / "shards").glob("*.json"))]
    markers = [m for m in markers if isinstance(m, dict)]
    made = sum(m.get("agent_requests", 0) for m in markers)
    judged = sum(m.get("judge_requests", 0) for m in markers)
    control_sent = sum(m.get("control_requests", 0) for m in markers)
    exhaustive = sum(m.get("judge_requests_exhaustive", 0) for m in markers)
    redactions: Counter[str] = Counter(_ingest_redactions(out_dir))  # tables scrubbed at ingest
    for m in markers:
        redactions.update(m.get("redactions", {}))  # shards scrubbed as loaded (raw tables)
    usage = merge_usage(out_dir)
    dropped: Counter[str] = Counter()
    for m in markers:
        dropped.update(m.get("dropped", {}))
    extra = {
        "dropped_steps": {"by reason (run)": dict(sorted(dropped.items()))},
        "early_exit": {
            "agent requests (references + judgements)": made,
            "agent requests for judging": judged,
            "agent requests for judging, exhaustive": exhaustive,
            "agent requests saved by early exit": max(0, exhaustive - judged),
            "agent requests for the control": control_sent,
        },
        "redactions": dict(sorted(redactions.items())),
        "budget": budget_section(out_dir),
    }
    settings = settings or NapSettings()
    extra["gate"] = gate_section(settings)
    extra["sampling"] = sampling_section(settings)
    batch = batch_section(out_dir)
    if batch:
        extra["batch"] = batch
    with loaded(out_dir):  # one read of each table for the figures and the plots
        report = build_report(
            out_dir,
            usage=usage,
            extra=extra,
            control_floor=settings.control_floor,
            control_mode=settings.control_mode,
        )
        write_plots(out_dir, intent_of=intent_of)
    result.stage_seconds["report"] = time.perf_counter() - report_started
    if started is not None:
        result.seconds = time.perf_counter() - started
    run = {k: v for k, v in dataclasses.asdict(result).items() if k != "report"}
    report["run"] = json_safe(run | {"out_dir": str(out_dir)})
    write_report(out_dir, report)
    return report


def gate_section(settings: NapSettings) -> dict[str, Any]:
    """Which gate judged this run, for the report and the card."""
    section: dict[str, Any] = {"mode": settings.gate_mode}
    if settings.gate_mode == "likelihood":
        section |= {
            "likelihood_score": settings.likelihood_score,
            "threshold": settings.likelihood_threshold,
        }
    else:
        section |= {"similarity": settings.similarity, "threshold": settings.threshold}
    section |= {"aggregate": settings.aggregate, "top_k": settings.top_k}
    if settings.aggregate == "agree":
        agree, needed = settings.agree_counts
        section |= {"min_agree": agree, "min_references": needed}
    return section


def batch_section(out_dir: Path) -> dict[str, Any]:
    """Batch lines that failed, by reason (the ledger's): refused ones were never resent."""
    from builder.llm.batch.ledger import BatchLedger
    from builder.llm.batch.status import LEDGER

    if not (out_dir / LEDGER).exists():
        return {}
    ledger = BatchLedger(out_dir / LEDGER)
    try:
        return {"refused": ledger.reasons("refused"), "failed": ledger.reasons("failed")}
    finally:
        ledger.close()


def sampling_section(settings: NapSettings) -> dict[str, Any]:
    """The temperatures the models really sampled at (a model that refuses any other samples
    at 1.0: `builder.llm.model_rules`), and what that means for the gate and the control."""
    section: dict[str, Any] = {
        "teacher": {"effective": settings.teacher_temperature},
        "references": {"effective": settings.reference_temperature},
        "agent": {"effective": settings.agent_temperature},
    }
    if settings.agent_temperature == 1.0 == settings.reference_temperature:
        section["note"] = (
            "the agent samples at temperature 1 (its only choice, or the config's): judged "
            "actions and references come from the same distribution, and the control's pass "
            "rate is the agreement of that distribution with itself, the baseline the gate's "
            "pass rates should be read against"
        )
    return section


def intent_of(command: str | None) -> str:
    """The intent class of a step's command (the last unit of a sequence), for the plots."""
    from builder.similarity.features import shell_features

    if not command:
        return "none"
    units = shell_features(command)
    return units[-1].intent if units else "unknown"


def merge_usage(out_dir: Path) -> dict[str, Any]:
    """Usage summed over every invocation of this run (a resumed run has several)."""
    stages: dict[str, dict[str, float]] = {}
    total: dict[str, float] = {}
    for path in sorted((out_dir / "_state" / "usage").glob("*.json")):
        data = read_json(path) or {}
        for name, values in data.get("stages", {}).items():
            counter = stages.setdefault(name, {})
            for key, value in values.items():
                items = value.items() if isinstance(value, dict) else [("", value)]
                for kind, number in items:
                    if isinstance(number, int | float):
                        label = f"{key}.{kind}" if kind else key
                        counter[label] = counter.get(label, 0) + number
                        total[label] = total.get(label, 0) + number
    return {"stages": stages, "total": total}


def _ingest_redactions(out_dir: Path) -> dict[str, int]:
    """What the ingest redacted, by kind (`ingest_summary.json`; empty for raw tables)."""
    summary = read_json(out_dir / "ingest_summary.json")
    found = summary.get("redactions") if isinstance(summary, dict) else None
    return {k: v for k, v in found.items() if isinstance(v, int)} if isinstance(found, dict) else {}
