"""Eval figures, computed from each compressor's `steps.parquet` (read back, like the run
report), and the outputs: steps.parquet + report.json per compressor, report.md and a plot of
preservation rate against tokens saved across compressors."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from builder.config import PipelineConfig, config_hash
from builder.evaluate.compressors import Spec, describe
from builder.nap.from_config import gate_counts
from builder.report.build import _write_atomic, json_safe
from builder.report.svg import scatter
from builder.storage.parquet_shards import write_table_atomic
from schemas.common import to_table
from schemas.eval_steps import EVAL_STEP_SCHEMA, EvalStepRecord

PLOT_NAME = "preservation_vs_tokens_saved.svg"
FIGURES = (
    "steps",
    "preserved",
    "preservation_rate",
    "raw_tokens",
    "compressed_tokens",
    "tokens_saved_fraction",
)


def figures(frame: pl.DataFrame) -> dict[str, Any]:
    """The headline figures over the evaluated rows of `frame`."""
    done = frame.filter(pl.col("evaluated"))
    steps = done.height
    preserved = int(done["preserved"].sum())
    raw = int(done["raw_tokens"].sum())
    compressed = int(done["compressed_tokens"].sum())
    return {
        "steps": steps,
        "preserved": preserved,
        "preservation_rate": preserved / steps if steps else None,
        "raw_tokens": raw,
        "compressed_tokens": compressed,
        "tokens_saved_fraction": (raw - compressed) / raw if raw else None,
        "valid_outputs": int(done["valid"].sum()),
        "fell_back_to_raw": int(done["fell_back_to_raw"].sum()),
        "agent_format_errors": int(done["format_error"].sum()),
    }


def own_prefix_figures(frame: pl.DataFrame) -> dict[str, Any]:
    """The figures of the rows judged with the compressor's own earlier outputs, and what it
    saves of the eligible observations the agent has seen by each step (those before it, and
    its own)."""
    found = figures(frame)
    done = frame.filter(pl.col("evaluated"))
    raw = int((done["raw_tokens"] + done["prefix_raw_tokens"]).sum())
    shown = int((done["compressed_tokens"] + done["prefix_shown_tokens"]).sum())
    found["steps_with_prefix_replaced"] = int((done["prefix_replaced"] > 0).sum())
    found["context_observation_tokens_raw"] = raw
    found["context_observation_tokens_shown"] = shown
    found["context_tokens_saved_fraction"] = (raw - shown) / raw if raw else None
    return found


def build_report(frame: pl.DataFrame) -> dict[str, Any]:
    """Figures overall, by action intent, and the steps that were not evaluated."""
    report = figures(frame)
    report["by_intent"] = {
        intent: figures(frame.filter(pl.col("intent") == intent))
        for intent in sorted(frame["intent"].unique().to_list())
    }
    skipped = frame.filter(~pl.col("evaluated"))["skip_reason"].value_counts(sort=True)
    report["skipped"] = {str(r): int(n) for r, n in skipped.iter_rows()}
    invalid = frame.filter(~pl.col("valid"))["invalid_reason"].value_counts(sort=True)
    report["invalid_by_reason"] = {str(r): int(n) for r, n in invalid.iter_rows()}
    return report


def write_outputs(
    eval_dir: Path,
    specs: Sequence[Spec],
    rows: Mapping[str, list[EvalStepRecord]],
    cfg: PipelineConfig,
    meta: Mapping[str, Any],
    *,
    usage: Mapping[str, Any] | None = None,
) -> tuple[dict[str, dict[str, Any]], Path, Path]:
    """Write every compressor's folder, then report.md and the plot; returns the reports."""
    reports: dict[str, dict[str, Any]] = {}
    for spec in specs:
        folder = eval_dir / spec.folder
        path = folder / "steps.parquet"
        write_table_atomic(to_table(rows[spec.name], EVAL_STEP_SCHEMA), path)
        frame = pl.read_parquet(path)
        raw, own = (frame.filter(pl.col("prefix_mode") == m) for m in ("raw", "own"))
        report = build_report(raw if raw.height or not own.height else own)
        if own.height:
            report["own_prefixes"] = own_prefix_figures(own)
        report = {
            "compressor": spec.name,
            "description": describe(spec, cfg),
            **report,
            "gate": _gate(cfg),
            "config_hash": config_hash(cfg),
            **meta,
        }
        reports[spec.name] = json_safe(report)
        _write_atomic(folder / "report.json", json.dumps(reports[spec.name], indent=2) + "\n")
    md = eval_dir / "report.md"
    _write_atomic(md, render_markdown(reports, _gate(cfg), meta, usage))
    return reports, md, write_plot(reports, eval_dir / PLOT_NAME)


def _gate(cfg: PipelineConfig) -> dict[str, Any]:
    agree, needed = gate_counts(cfg)
    return {
        "min_agree": agree,
        "min_references": needed,
        "references": cfg.references.mode,
        "reference_samples": cfg.references.samples if cfg.references.mode == "sampled" else 1,
        "similarity": cfg.gate.similarity,
        "aggregate": cfg.gate.aggregate,
        "top_k": cfg.gate.top_k,
        "threshold": cfg.gate.threshold,
        "agent_model": cfg.agent.model,
    }


def _rule(gate: Mapping[str, Any]) -> str:
    if gate["aggregate"] == "agree":
        return (
            f"at least {gate['min_agree']} reference(s) at similarity >= {gate['threshold']} "
            f"(of at least {gate['min_references']} valid)"
        )
    return f"{gate['aggregate']} (k={gate['top_k']}) >= {gate['threshold']}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def render_markdown(
    reports: Mapping[str, Mapping[str, Any]],
    gate: Mapping[str, Any],
    meta: Mapping[str, Any],
    usage: Mapping[str, Any] | None = None,
) -> str:
    """One table across compressors, then preservation by intent."""
    where = f"split `{meta['split']}` of `{meta['dataset']}`" if meta.get("split") else "all inputs"
    lines = [
        "# nap-builder eval report",
        "",
        f"Eligible steps of {where}; gate: {gate['similarity']} similarity, "
        f"{_rule(gate)} against "
        f"{gate['reference_samples']} {gate['references']} reference(s), "
        f"agent `{gate['agent_model']}`.",
        "",
        "| compressor | steps | preserved | preservation rate | raw tokens | compressed tokens "
        "| tokens saved | invalid → raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in reports.items():
        lines.append(
            f"| `{name}` | {r['steps']} | {r['preserved']} | {_pct(r['preservation_rate'])} "
            f"| {r['raw_tokens']:,} | {r['compressed_tokens']:,} "
            f"| {_pct(r['tokens_saved_fraction'])} | {r['fell_back_to_raw']} |"
        )
    intents = sorted({i for r in reports.values() for i in r.get("by_intent", {})})
    if intents:
        lines += ["", "## preservation rate by action intent", ""]
        lines.append("| compressor | " + " | ".join(intents) + " |")
        lines.append("|---|" + "---:|" * len(intents))
        for name, r in reports.items():
            cells = []
            for intent in intents:
                f = r["by_intent"].get(intent)
                cells.append(f"{_pct(f['preservation_rate'])} ({f['steps']})" if f else "–")
            lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    own = {name: r for name, r in reports.items() if r.get("own_prefixes")}
    if own:
        lines += ["", *_prefix_table(own)]
    skipped = {name: r["skipped"] for name, r in reports.items() if r.get("skipped")}
    if skipped:
        lines += ["", "Steps not evaluated: " + "; ".join(f"`{n}` {s}" for n, s in skipped.items())]
    total = (usage or {}).get("total") or {}
    if isinstance(total.get("requests"), int):
        lines += [
            "",
            f"Requests sent: {total['requests']}, answered from the cache: "
            f"{total.get('cache_hits', 0)}, cost ${total.get('cost_usd', 0.0):.4f}.",
        ]
    return "\n".join(lines) + "\n"


def _prefix_table(reports: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Preservation with raw earlier observations and with the compressor's own outputs in
    their place, side by side: a compressor that holds up once deployed keeps its rate."""
    lines = [
        "## on raw prefixes and on its own compressed prefixes",
        "",
        "| compressor | preserved, raw prefixes | preserved, own prefixes "
        "| tokens saved at the step | observation tokens saved in the context (own) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in reports.items():
        own = r["own_prefixes"]
        raw_rate = _pct(r["preservation_rate"]) if "raw" in r.get("prefixes", []) else "–"
        lines.append(
            f"| `{name}` | {raw_rate} | {_pct(own['preservation_rate'])} "
            f"| {_pct(own['tokens_saved_fraction'])} "
            f"| {_pct(own['context_tokens_saved_fraction'])} |"
        )
    return lines


def write_plot(reports: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """Preservation rate (y) against the fraction of tokens saved (x), one point per compressor."""
    points = [
        (name, r["tokens_saved_fraction"], r["preservation_rate"])
        for name, r in reports.items()
        if r.get("tokens_saved_fraction") is not None and r.get("preservation_rate") is not None
    ]
    svg = scatter(
        points,
        x_range=(-0.05, 1.05),
        y_range=(-0.05, 1.05),
        xlabel="tokens saved (fraction of raw observation tokens)",
        ylabel="next-action preservation rate",
        title="Compressors: preservation vs tokens saved (up and right is better)",
    )
    _write_atomic(path, svg)
    return path
