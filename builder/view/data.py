"""Each step of a run as one compact dict: raw observation, candidates, references, judgements,
selection, and eval results when OUT/eval/ has them.

A `code` candidate's rendered text is not stored when the page can rebuild it exactly from the
raw observation and its ranges (checked here against `render`), and an `unchanged` one when it
equals the raw text: observations dominate the file, so each is embedded once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from builder.evaluate.intents import action_intent
from builder.ingest.instances import run_instance_ids
from builder.report.build import STEP_KEY, scan_table
from builder.teacher.output import CompressorOutput
from builder.teacher.parse import parse_output
from builder.teacher.render import render
from schemas.steps import Action

Key = tuple[str, int]


def _action(row: dict[str, Any] | None) -> Action | None:
    return Action(**row) if row else None


def action_text(row: dict[str, Any] | None) -> str | None:
    """How an action reads on the page: the shell command, or `tool arguments`."""
    if not row:
        return None
    command = row.get("command")
    return command if command is not None else f"{row.get('tool')} {row.get('arguments')}"


def _grouped(frame: pl.DataFrame) -> dict[Key, list[dict[str, Any]]]:
    groups: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    for row in frame.iter_rows(named=True):
        groups[(row["trajectory_id"], row["step_index"])].append(row)
    return groups


def _table(out_dir: Path, name: str, columns: Iterable[str]) -> dict[Key, list[dict[str, Any]]]:
    return _grouped(scan_table(out_dir, name).select(*STEP_KEY, *columns).collect())


def candidate_entry(row: dict[str, Any], raw: str) -> dict[str, Any]:
    """One candidate: its ranges when the page can rebuild the render, else the render."""
    entry: dict[str, Any] = {
        "i": row["candidate_index"],
        "src": row["source"],
        "kind": row["kind"],
        "valid": row["valid"],
        "why": row["invalid_reason"],
        "dup": row["duplicate_of"],
        "rt": row["rendered_tokens"],
        "out": row["output"],
    }
    rendered = row["rendered"]
    parsed = parse_output(row["output"]) if row["output"] else None
    if isinstance(parsed, CompressorOutput) and parsed.kind == "code" and rendered is not None:
        entry["rg"] = [[r.start, r.end, r.summary] for r in parsed.ranges]
        try:
            rebuilt = render(parsed, raw) == rendered
        except ValueError:
            rebuilt = False
        if not rebuilt:
            entry["ren"] = rendered
    elif rendered is not None and rendered == raw:
        entry["same"] = True
    elif rendered is not None:
        entry["ren"] = rendered
    elif row["reply"] is not None:
        entry["reply"] = row["reply"][:2000]
    return entry


def judgement_entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "a": action_text(row["action"]),
        "sc": row["aggregate"],
        "sims": row["similarities"],
        "ok": row["passed"],
        "fe": row["format_error"],
        "o": row["judge_order"],
    }


def eval_rows(out_dir: Path) -> dict[Key, list[dict[str, Any]]]:
    """Eval results per step (OUT/eval/<spec>/steps.parquet), when there are any."""
    parts = sorted((Path(out_dir) / "eval").glob("*/steps.parquet"))
    if not parts:
        return {}
    frame = pl.concat(
        [
            pl.read_parquet(
                p,
                columns=[
                    *STEP_KEY,
                    "compressor",
                    "evaluated",
                    "preserved",
                    "score",
                    "agent_action",
                    "raw_tokens",
                    "compressed_tokens",
                    "skip_reason",
                ],
            )
            for p in parts
        ]
    )
    return {
        key: [
            {
                "c": r["compressor"],
                "ok": r["preserved"] if r["evaluated"] else None,
                "sc": r["score"],
                "a": action_text(r["agent_action"]),
                "tok": [r["raw_tokens"], r["compressed_tokens"]],
                "skip": r["skip_reason"],
            }
            for r in rows
        ]
        for key, rows in _grouped(frame).items()
    }


COLUMNS: dict[str, list[str]] = {
    "candidates": [
        "candidate_index", "source", "kind", "valid", "invalid_reason", "duplicate_of",
        "rendered", "rendered_tokens", "output", "reply",
    ],
    "references": ["reference_index", "mode", "action", "format_error", "similarity_to_logged"],
    "judgements": [
        "candidate_index", "judge_order", "action", "aggregate", "similarities", "passed",
        "format_error",
    ],
    "supervision": [
        "rank", "candidate_index", "source", "is_fallback", "target", "similarity",
        "length_reward", "rendered_tokens",
    ],
}  # fmt: skip


def reference_entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "m": row["mode"],
        "a": action_text(row["action"]),
        "fe": row["format_error"],
        "sim": row["similarity_to_logged"],
    }


def selection_entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "r": row["rank"],
        "c": row["candidate_index"],
        "src": row["source"],
        "fb": row["is_fallback"],
        "sim": row["similarity"],
        "lr": row["length_reward"],
        "target": row["target"],
        "rt": row["rendered_tokens"],
    }


def step_entry(
    row: dict[str, Any],
    rows: dict[str, list[dict[str, Any]]],
    evals: list[dict[str, Any]],
    instance: str | None = None,
) -> dict[str, Any]:
    """One step with its rows of every table (`rows`: table -> this step's rows) and the task
    instance of its trajectory, where its format records one."""
    raw = row["observation"] or ""
    judged = {j["candidate_index"]: judgement_entry(j) for j in rows["judgements"]}
    chosen = {s["candidate_index"]: s["rank"] for s in rows["supervision"]}
    cands = []
    for c in sorted(rows["candidates"], key=lambda c: c["candidate_index"]):
        entry = candidate_entry(c, raw)
        entry["j"] = judged.get(c["candidate_index"])
        entry["sel"] = chosen.get(c["candidate_index"])
        cands.append(entry)
    return {
        "t": row["trajectory_id"],
        "inst": instance,
        "s": row["step_index"],
        "intent": action_intent(_action(row["action"])),
        "cmd": action_text(row["action"]),
        "focus": row["focus_question"],
        "logged": action_text(row["next_action"]),
        "obs": raw,
        "tok": row["observation_tokens"],
        "refs": [
            reference_entry(r)
            for r in sorted(rows["references"], key=lambda r: r["reference_index"])
        ],
        "cands": cands,
        "sel": [selection_entry(s) for s in sorted(rows["supervision"], key=lambda s: s["rank"])],
        "ev": evals,
    }


def build_steps(out_dir: Path) -> list[dict[str, Any]]:
    """Every eligible step of the run, in (trajectory, step) order."""
    out_dir = Path(out_dir)
    steps = (
        scan_table(out_dir, "steps")
        .filter(pl.col("eligible"))
        .select(
            *STEP_KEY,
            "action",
            "next_action",
            "observation",
            "focus_question",
            "observation_tokens",
        )
        .sort(STEP_KEY)
        .collect()
    )
    tables = {name: _table(out_dir, name, columns) for name, columns in COLUMNS.items()}
    evals = eval_rows(out_dir)
    instances = run_instance_ids(out_dir)
    result = []
    for row in steps.iter_rows(named=True):
        key = (row["trajectory_id"], row["step_index"])
        rows = {name: table.get(key, []) for name, table in tables.items()}
        instance = instances.get(row["trajectory_id"])
        result.append(step_entry(row, rows, evals.get(key, []), instance))
    return result
