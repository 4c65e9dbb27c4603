"""Human-readable view of one trajectory's steps from an output directory."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from builder.errors import InputError
from builder.run.folder_kind import require_tables


def list_trajectories(out_dir: Path) -> str:
    """One line per trajectory: id, instance id, harness, steps and eligible steps."""
    require_tables(out_dir, "inspect", "trajectories", "steps")
    trajectories = pl.scan_parquet(out_dir / "trajectories" / "*.parquet").select(
        "trajectory_id", "native_id", "harness", "source_format"
    )
    steps = (
        pl.scan_parquet(out_dir / "steps" / "*.parquet")
        .group_by("trajectory_id")
        .agg(pl.len().alias("steps"), pl.col("eligible").sum().alias("eligible"))
    )
    rows = (
        trajectories.join(steps, on="trajectory_id", how="left")
        .sort("trajectory_id")
        .collect()
        .iter_rows(named=True)
    )
    from builder.ingest.instances import instance_id_of

    header = f"{'trajectory':<20}  {'instance':<32}  {'harness':<16}  {'steps':>5}  {'eligible':>8}"
    lines = [header]
    for row in rows:
        harness = row["harness"] or row["source_format"] or "-"
        instance = instance_id_of(row["source_format"], row["native_id"]) or "-"
        lines.append(
            f"{row['trajectory_id']:<20}  {instance:<32}  {harness:<16}  "
            f"{row['steps'] or 0:>5}  {row['eligible'] or 0:>8}"
        )
    lines.append(f"{len(lines) - 1} trajectories")
    return "\n".join(lines)


def render_trajectory(out_dir: Path, trajectory: str, *, head_lines: int = 5) -> str:
    """Each step: action, observation head and eligibility (reason when not eligible)."""
    require_tables(out_dir, "inspect", "steps")
    steps_dir = out_dir / "steps"
    steps = (
        pl.scan_parquet(steps_dir / "*.parquet")
        .filter(pl.col("trajectory_id").str.starts_with(trajectory))
        .sort("trajectory_id", "step_index")
        .collect()
    )
    if steps.height == 0:
        raise InputError(f"no trajectory with id starting {trajectory!r} in {out_dir}")
    ids = steps["trajectory_id"].unique().to_list()
    if len(ids) > 1:
        raise InputError(f"{trajectory!r} matches {len(ids)} trajectories; give more characters")
    lines = [f"trajectory {ids[0]}  ({steps.height} steps, {steps['eligible'].sum()} eligible)"]
    lines += _origin(out_dir, ids[0])
    for row in steps.iter_rows(named=True):
        action = row["action"] or {}
        shown = action.get("command") or f"{action.get('tool')} {action.get('arguments')}"
        verdict = "eligible" if row["eligible"] else f"not eligible: {row['ineligible_reason']}"
        lines.append("")
        lines.append(
            f"step {row['step_index']}  [{verdict}]  obs tokens={row['observation_tokens']} "
            f"numbered={row['observation_numbered_tokens']} prefix={row['prefix_tokens']}"
        )
        lines.append(f"  action: {_one_line(shown)}")
        if row["focus_question"]:
            lines.append(f"  focus: {row['focus_question']}")
        observation = row["observation"].split("\n")
        for text in observation[:head_lines]:
            lines.append(f"  | {text[:160]}")
        if len(observation) > head_lines:
            lines.append(f"  | ... ({len(observation) - head_lines} more lines)")
    return "\n".join(lines)


def _origin(out_dir: Path, trajectory_id: str) -> list[str]:
    """Where the trajectory came from: its task instance, harness, format and file."""
    from builder.ingest.instances import instance_id_of

    folder = out_dir / "trajectories"
    if not any(folder.glob("*.parquet")):
        return []
    found = (
        pl.scan_parquet(folder / "*.parquet")
        .filter(pl.col("trajectory_id") == trajectory_id)
        .select("source_format", "native_id", "harness", "source_path", "record_index")
        .collect()
    )
    if found.height == 0:
        return []
    row = found.row(0, named=True)
    instance = instance_id_of(row["source_format"], row["native_id"]) or "not recorded"
    return [
        f"instance {instance}  harness {row['harness']}  format {row['source_format']}",
        f"source {Path(row['source_path']).name} record {row['record_index']}",
    ]


def _one_line(text: str | None, limit: int = 200) -> str:
    flat = " ⏎ ".join((text or "").splitlines())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
