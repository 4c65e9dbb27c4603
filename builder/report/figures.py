"""The report's figures: one function per section, each a handful of polars queries over the
run folder's tables (`report_tables`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from builder.report.savings import best_rows_expr
from builder.report.tables import STEP_KEY

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def _count(frame: pl.LazyFrame, *conditions: pl.Expr) -> int:
    for condition in conditions:
        frame = frame.filter(condition)
    return int(frame.select(pl.len()).collect().item())


def _counts_by(frame: pl.LazyFrame, column: str, *conditions: pl.Expr) -> dict[str, int]:
    for condition in conditions:
        frame = frame.filter(condition)
    rows = (
        frame.group_by(column)
        .agg(pl.len().alias("n"))
        .sort(["n", column], descending=[True, False])
    )
    return {str(key): int(n) for key, n in rows.collect().iter_rows()}


def _totals(t: dict[str, pl.LazyFrame]) -> dict[str, Any]:
    steps, candidates, judgements = t["steps"], t["candidates"], t["judgements"]
    supervision = t["supervision"]
    trajectories = _count(t["trajectories"])
    if trajectories == 0:
        trajectories = _count(steps.select("trajectory_id").unique())
    eligible = pl.col("eligible")
    return {
        "trajectories": trajectories,
        "quarantined": _count(t["quarantine"]),
        "quarantined_by_kind": _counts_by(t["quarantine"], "error_kind"),
        "steps": _count(steps),
        "eligible_steps": _count(steps, eligible),
        "ineligible_by_reason": _counts_by(steps, "ineligible_reason", ~eligible),
        "candidates": _count(candidates),
        "valid_candidates": _count(candidates, pl.col("valid")),
        "invalid_by_reason": _counts_by(candidates, "invalid_reason", ~pl.col("valid")),
        # a duplicate row is kept invalid with `duplicate_of` set (judged once, as the first)
        "duplicate_candidates": _count(candidates, pl.col("duplicate_of").is_not_null()),
        "judged_candidates": _count(judgements),
        "agent_format_errors": _count(judgements, pl.col("format_error")),
        "passing_candidates": _count(judgements, pl.col("passed")),
        "steps_with_passing_candidate": _count(
            judgements.filter(pl.col("passed")).select(STEP_KEY).unique()
        ),
        "selected_rows": _count(supervision, ~pl.col("is_fallback")),
        "fallback_rows": _count(supervision, pl.col("is_fallback")),
        "selected_steps": _count(supervision.select(STEP_KEY).unique()),
        "preference_pairs": _count(t["preferences"]),
    }


def _dropped_steps(t: dict[str, pl.LazyFrame]) -> dict[str, int]:
    """Eligible steps that produced no supervision row, by the first stage that came up empty."""
    eligible = t["steps"].filter(pl.col("eligible")).select(STEP_KEY).unique()
    per_step = [
        t["candidates"].group_by(STEP_KEY).agg(pl.len().alias("n_candidates")),
        t["candidates"].group_by(STEP_KEY).agg(pl.col("valid").sum().alias("n_valid")),
        t["judgements"].group_by(STEP_KEY).agg(pl.len().alias("n_judged")),
        t["judgements"].group_by(STEP_KEY).agg(pl.col("passed").sum().alias("n_passed")),
        t["supervision"].group_by(STEP_KEY).agg(pl.len().alias("n_selected")),
    ]
    frame = eligible
    for counts in per_step:
        frame = frame.join(counts, on=STEP_KEY, how="left")
    frame = frame.with_columns(pl.exclude(STEP_KEY).fill_null(0)).filter(pl.col("n_selected") == 0)
    reason = (
        pl.when(pl.col("n_candidates") == 0)
        .then(pl.lit("no_candidates"))
        .when(pl.col("n_valid") == 0)
        .then(pl.lit("no_valid_candidate"))
        .when(pl.col("n_judged") == 0)
        .then(pl.lit("not_judged"))
        .when(pl.col("n_passed") == 0)
        .then(pl.lit("no_passing_candidate"))
        .otherwise(pl.lit("not_selected"))
        .alias("reason")
    )
    by_reason = _counts_by(frame.select(reason), "reason")
    return {"total": sum(by_reason.values()), **by_reason}


def _compression(t: dict[str, pl.LazyFrame]) -> dict[str, Any]:
    """Raw vs selected tokens: totals over the best row of each step (builder.report.savings),
    and the ratio distribution over every selected row."""
    chosen = t["supervision"].filter(~pl.col("is_fallback"))
    best = t["supervision"].filter(best_rows_expr())
    sums = best.select(
        pl.col("raw_tokens").sum().alias("raw"),
        pl.col("rendered_tokens").sum().alias("selected"),
        pl.col("raw_chars").sum().alias("raw_chars"),
        pl.col("rendered_chars").sum().alias("selected_chars"),
    ).collect()
    raw, selected, raw_chars, selected_chars = (int(v or 0) for v in sums.row(0))
    observation_tokens = int(
        t["steps"].select(pl.col("observation_tokens").sum()).collect().item() or 0
    )
    ratios = (
        chosen.filter(pl.col("raw_tokens") > 0)
        .select((pl.col("rendered_tokens") / pl.col("raw_tokens")).alias("ratio"))
        .collect()["ratio"]
        .drop_nulls()
    )
    return {
        "selected_steps": _count(best),
        "raw_tokens": raw,
        "selected_tokens": selected,
        "tokens_saved": raw - selected,
        "token_ratio": selected / raw if raw else None,
        "raw_chars": raw_chars,
        "selected_chars": selected_chars,
        "observation_tokens_all_steps": observation_tokens,
        "share_of_observation_tokens_saved": (
            (raw - selected) / observation_tokens if observation_tokens else None
        ),
        "ratio_distribution": _distribution(ratios),
    }


def _distribution(values: pl.Series) -> dict[str, Any]:
    if values.len() == 0:
        return {"count": 0}
    summary: dict[str, Any] = {"count": values.len(), "mean": float(values.mean())}  # type: ignore[arg-type]
    for q in QUANTILES:
        summary[f"p{round(q * 100)}"] = float(values.quantile(q, interpolation="linear"))  # type: ignore[arg-type]
    summary["min"], summary["max"] = float(values.min()), float(values.max())  # type: ignore[arg-type]
    return summary


def _by_source(t: dict[str, pl.LazyFrame]) -> dict[str, dict[str, int]]:
    """Candidates, validity, passes and selections per source (teacher, rule:<name>)."""
    key = [*STEP_KEY, "candidate_index"]
    judged = t["judgements"].select(*key, pl.col("passed").cast(pl.Int64))
    selected = (
        t["supervision"]
        .filter(~pl.col("is_fallback"))
        .select(key)
        .with_columns(pl.lit(1, dtype=pl.Int64).alias("selected"))
    )
    frame = (
        t["candidates"]
        .select(*key, "source", pl.col("valid").cast(pl.Int64))
        .join(judged, on=key, how="left")
        .join(selected, on=key, how="left")
        .group_by("source")
        .agg(
            pl.len().alias("candidates"),
            pl.col("valid").sum(),
            pl.col("passed").is_not_null().sum().alias("judged"),
            pl.col("passed").fill_null(0).sum().alias("passed"),
            pl.col("selected").fill_null(0).sum().alias("selected"),
        )
        .sort("source")
        .collect()
    )
    return {row.pop("source"): {k: int(v) for k, v in row.items()} for row in frame.to_dicts()}


def _reference_stability(references: pl.LazyFrame) -> dict[str, Any]:
    """How often two sampled references of a step are the same command text, and how close
    references are to the logged action under the configured similarity.

    The names say what is measured: `same_command_rate_*` is string equality after whitespace
    collapse (not the gate's similarity), and `similarity_to_logged_is_1` is the share of
    references whose configured similarity to the logged action is 1.0 (for `semantic` that is
    "no difference found", not byte equality).
    """
    command = pl.col("action").struct.field("command")
    text = pl.coalesce(command, pl.col("action").struct.field("arguments"))
    sampled = references.filter(
        (pl.col("mode") == "sampled") & pl.col("action").is_not_null()
    ).select(
        *STEP_KEY,
        "reference_index",
        text.str.replace_all(r"\s+", " ").str.strip_chars().alias("text"),
    )
    pairs = sampled.join(sampled, on=STEP_KEY, suffix="_b").filter(
        pl.col("reference_index") < pl.col("reference_index_b")
    )
    per_step = (
        pairs.group_by(STEP_KEY)
        .agg((pl.col("text") == pl.col("text_b")).mean().alias("agreement"))
        .collect()["agreement"]
    )
    pooled = pairs.select((pl.col("text") == pl.col("text_b")).mean()).collect().item()
    logged = references.select(pl.col("similarity_to_logged").drop_nulls()).collect()
    logged_values = logged["similarity_to_logged"]
    return {
        "references": _count(references),
        "reference_format_errors": _count(references, pl.col("format_error")),
        "steps_with_reference_pairs": per_step.len(),
        "same_command_rate_mean": float(per_step.mean()) if per_step.len() else None,  # type: ignore[arg-type]
        "same_command_rate_pooled": float(pooled) if pooled is not None else None,
        "similarity_to_logged_mean": (
            float(logged_values.mean()) if logged_values.len() else None  # type: ignore[arg-type]
        ),
        "similarity_to_logged_is_1": (
            float((logged_values >= 1.0).mean()) if logged_values.len() else None  # type: ignore[arg-type]
        ),
    }


def _early_exit(t: dict[str, pl.LazyFrame]) -> dict[str, Any]:
    """Judgements that shortest-first early exit made unnecessary, on the steps that were judged.

    An exhaustive run judges every valid, non-duplicate candidate of those steps.
    """
    judged_steps = t["judgements"].select(STEP_KEY).unique()
    judgeable = _count(
        t["candidates"]
        .filter(pl.col("valid") & pl.col("duplicate_of").is_null())
        .join(judged_steps, on=STEP_KEY, how="semi")
    )
    judged = _count(t["judgements"])
    agent_requests = int(t["judgements"].select(pl.col("attempts").sum()).collect().item() or 0)
    return {
        "judgeable_candidates": judgeable,
        "judged_candidates": judged,
        "judgements_saved": max(judgeable - judged, 0),
        "agent_requests_for_judgements": agent_requests,
    }


def _usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request accounting as given (e.g. `UsageLedger.as_dict()`: totals and per stage),
    with `cache_hit_rate` added to every level that counts cache hits and misses."""
    result: dict[str, Any] = {}
    for key, value in (usage or {}).items():
        result[key] = _usage(value) if isinstance(value, Mapping) else value
    hits, misses = result.get("cache_hits"), result.get("cache_misses")
    if isinstance(hits, int) and isinstance(misses, int) and hits + misses > 0:
        result.setdefault("cache_hit_rate", hits / (hits + misses))
    return result
