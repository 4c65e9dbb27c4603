"""One shard's work: load and scrub its steps, run NAP on each, write its tables and marker.

This is the unit a distributed executor (Ray Data) would run: a function of a shard plan, the
clients and the settings, with no global state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.actions.similarity import get_similarity
from builder.aio import gather_settled
from builder.errors import PermanentLLMError
from builder.formats import get_adapter
from builder.llm.batch.queue import BatchDeferred
from builder.llm.factory import Clients
from builder.nap import NapSettings, StepJob, StepResult, process_step
from builder.runner.shards import (
    NAP_TABLES,
    ShardPlan,
    load_shard,
    marker_path,
    write_json_atomic,
)
from builder.runner.workers import off_loop
from builder.shards import write_table_atomic
from builder.storage.mirror import push_paths
from schemas.candidates import CANDIDATE_SCHEMA
from schemas.common import to_table
from schemas.judgements import JUDGEMENT_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.references import REFERENCE_SCHEMA
from schemas.steps import StepRecord
from schemas.supervision import SUPERVISION_SCHEMA
from schemas.trajectories import TrajectoryRecord

if TYPE_CHECKING:
    from builder.scrub import Scrubber

log = logging.getLogger(__name__)

SCHEMAS = {
    "candidates": CANDIDATE_SCHEMA,
    "references": REFERENCE_SCHEMA,
    "judgements": JUDGEMENT_SCHEMA,
    "supervision": SUPERVISION_SCHEMA,
    "preferences": PREFERENCE_SCHEMA,
}


@dataclass(frozen=True)
class ScrubSettings:
    enabled: bool = True
    emails: bool = False


def prepare_shard(
    out_dir: Path, plan: ShardPlan, scrub: ScrubSettings
) -> tuple[list[StepJob], Scrubber | None]:
    """The shard's eligible steps as jobs, credentials redacted before any text reaches a
    model. Pure I/O and CPU: runs in a worker thread so requests keep flowing meanwhile."""
    trajectories, steps = load_shard(out_dir, plan)
    from builder.scrub import Scrubber  # ~75 ms to import: only where shards are prepared

    scrubber = Scrubber(emails=scrub.emails) if scrub.enabled else None
    if scrubber is not None:
        wanted = {s.trajectory_id for s in steps}
        trajectories = {
            k: scrubber.scrub_trajectory(t) for k, t in trajectories.items() if k in wanted
        }
        steps = [scrubber.scrub_step(s) for s in steps]
        scrubber.forget()  # kept for its counts while the shard runs, not for its memo
    jobs = []
    for step in steps:
        traj = trajectories[step.trajectory_id]
        jobs.append(StepJob(traj, step, get_adapter(traj.source_format)))
    return jobs, scrubber


def prepare_records(
    out_dir: Path, plan: ShardPlan, scrub: ScrubSettings
) -> tuple[list[tuple[TrajectoryRecord, StepRecord]], dict[str, int]]:
    """`prepare_shard` as plain records and redaction counts, to send back from a worker
    process (adapters stay in the parent)."""
    jobs, scrubber = prepare_shard(out_dir, plan, scrub)
    return [(job.traj, job.step) for job in jobs], dict(scrubber.counts) if scrubber else {}


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


class ShardDeferred(Exception):
    """Some steps of the shard wait for batch answers: nothing is written this round."""


async def run_shard(
    plan: ShardPlan,
    out_dir: Path,
    clients: Clients,
    settings: NapSettings,
    scrub: ScrubSettings,
    digest: str,
    on_step: Callable[[StepResult], None] = lambda _: None,
    step_slots: asyncio.Semaphore | None = None,
    pool: Executor | None = None,
) -> dict[str, Any]:
    """Process one shard and write its tables and marker; returns the marker's statistics.
    Loading, scrubbing and writing run in `pool`'s processes (in a thread without one)."""
    records, redactions = await off_loop(pool, prepare_records, out_dir, plan, scrub)
    jobs = [StepJob(traj, step, get_adapter(traj.source_format)) for traj, step in records]
    similarity = get_similarity(settings.similarity)

    async def one(job: StepJob) -> StepResult | None:
        async with step_slots or contextlib.nullcontext():
            try:
                result = await process_step(
                    job, clients.teacher, clients.agent, settings, similarity, clients.scorer
                )
            except BatchDeferred:
                return None  # its next request goes with this round's batch job
            except PermanentLLMError as exc:
                if exc.kind != "context_length":
                    raise
                step = job.step
                log.warning("step %s/%d dropped: %s", step.trajectory_id, step.step_index, exc)
                result = StepResult(dropped="context_too_long")
        on_step(result)
        return result

    # a failing step (budget refused, permanent error) lets the others' sent requests settle
    outcomes = list(await gather_settled(*(one(job) for job in jobs)))
    results = [r for r in outcomes if r is not None]
    if len(results) < len(outcomes):
        raise ShardDeferred(f"{len(outcomes) - len(results)} steps wait for a batch round")
    dropped = Counter(r.dropped for r in results if r.dropped)
    stats = {
        "config_hash": digest,
        "trajectories": len(plan.trajectory_ids),
        "eligible_steps": len(jobs),
        "dropped": dict(dropped),
        "agent_requests": sum(r.agent_requests for r in results),
        "judge_requests": sum(r.judge_requests for r in results),
        "judge_requests_exhaustive": sum(r.judge_requests_exhaustive for r in results),
        "control_requests": sum(r.control_requests for r in results),
        "redactions": redactions,
    }
    await off_loop(pool, write_shard, out_dir, plan, results, stats)
    return stats
