"""A shard's file work: its steps loaded and scrubbed, its NAP tables and marker written.

This is what the run's worker processes do (runner/workers.py), so it imports no model
client: the workers are forked before the parent loads that stack (`runner.run`), and the
records they send back are plain dataclasses.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.run.shards import NAP_TABLES, ShardPlan, load_shard, marker_path, write_json_atomic
from builder.scrub.settings import ScrubSettings
from builder.storage.mirror import push_paths
from builder.storage.parquet_shards import write_table_atomic
from schemas.candidates import CANDIDATE_SCHEMA
from schemas.common import to_table
from schemas.judgements import JUDGEMENT_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.prefixes import PREFIX_SCHEMA
from schemas.references import REFERENCE_SCHEMA
from schemas.round_steps import ROUND_STEP_SCHEMA
from schemas.steps import StepRecord
from schemas.supervision import SUPERVISION_SCHEMA
from schemas.trajectories import TrajectoryRecord

if TYPE_CHECKING:
    from builder.nap.step import StepResult
    from builder.scrub import Scrubber

SCHEMAS = {
    "candidates": CANDIDATE_SCHEMA,
    "references": REFERENCE_SCHEMA,
    "judgements": JUDGEMENT_SCHEMA,
    "supervision": SUPERVISION_SCHEMA,
    "preferences": PREFERENCE_SCHEMA,
    "prefixes": PREFIX_SCHEMA,
    "round_steps": ROUND_STEP_SCHEMA,
}


def load_scrubbed(
    out_dir: Path, plan: ShardPlan, scrub: ScrubSettings
) -> tuple[dict[str, TrajectoryRecord], list[StepRecord], Scrubber | None]:
    """The shard's trajectories and eligible steps, credentials redacted before any text
    reaches a model: by the ingest (the default), or here when the tables are kept raw."""
    trajectories, steps = load_shard(out_dir, plan)
    if not scrub.load_scrubs:
        return trajectories, steps, None
    from builder.scrub import Scrubber  # ~75 ms to import: only where shards are prepared

    scrubber = Scrubber(emails=scrub.emails)
    wanted = {s.trajectory_id for s in steps}
    trajectories = {k: scrubber.scrub_trajectory(t) for k, t in trajectories.items() if k in wanted}
    steps = [scrubber.scrub_step(s) for s in steps]
    scrubber.forget()  # kept for its counts while the shard runs, not for its memo
    return trajectories, steps, scrubber


def prepare_records(
    out_dir: Path, plan: ShardPlan, scrub: ScrubSettings
) -> tuple[list[tuple[TrajectoryRecord, StepRecord]], dict[str, int]]:
    """The shard's (trajectory, step) pairs and redaction counts, to send back from a worker
    process (adapters stay in the parent)."""
    trajectories, steps, scrubber = load_scrubbed(out_dir, plan, scrub)
    pairs = [(trajectories[s.trajectory_id], s) for s in steps]
    return pairs, dict(scrubber.counts) if scrubber else {}


def write_shard(
    out_dir: Path, plan: ShardPlan, results: list[StepResult], stats: dict[str, Any]
) -> None:
    """The shard's tables (atomically), then its completion marker; on an object-store run
    both are uploaded in that order before the shard counts as done."""
    rows: dict[str, list[Any]] = {t: [] for t in NAP_TABLES}
    for result in results:
        for table in NAP_TABLES:
            rows[table].extend(getattr(result, table))
    paths = [out_dir / table / f"{plan.shard_id}.parquet" for table in NAP_TABLES]
    for table, path in zip(NAP_TABLES, paths, strict=True):
        write_table_atomic(to_table(rows[table], SCHEMAS[table]), path)
    marker = marker_path(out_dir, plan.shard_id)
    write_json_atomic(marker, stats)
    push_paths(out_dir, [*paths, marker])  # object-store output: tables, then the marker
