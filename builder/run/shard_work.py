"""One shard's work: load and scrub its steps, run NAP on each, write its tables and marker
(the file work is `shard_io`'s, in the run's worker processes).

This is the unit a distributed executor (the Ray shard actors) runs: a function of a shard
plan, the clients and the settings, with no global state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.errors import PermanentLLMError, TransientLLMError
from builder.ingest.formats import get_adapter
from builder.llm.batch.queue import BatchDeferred
from builder.llm.factory import COMPRESSOR_ROLE, Clients
from builder.llm.settled import gather_settled
from builder.nap.prefix import ReplayJob, replay_jobs
from builder.nap.rounds import round_step, stamp
from builder.nap.step import NapSettings, StepJob, StepResult, process_step
from builder.run.shard_io import ScrubSettings, load_scrubbed, prepare_records, write_shard
from builder.run.shards import ShardPlan
from builder.run.workers import off_loop
from builder.similarity.compare import get_similarity
from schemas.steps import StepRecord
from schemas.trajectories import TrajectoryRecord

if TYPE_CHECKING:
    from builder.scrub import Scrubber

__all__ = ["Prepared", "ScrubSettings", "ShardDeferred", "prepare_shard", "run_shard"]

log = logging.getLogger(__name__)


def prepare_shard(
    out_dir: Path, plan: ShardPlan, scrub: ScrubSettings
) -> tuple[list[StepJob], Scrubber | None]:
    """The shard's eligible steps as jobs, scrubbed (`shard_io.load_scrubbed`), in this
    process (the plan, eval and Ray paths)."""
    trajectories, steps, scrubber = load_scrubbed(out_dir, plan, scrub)
    jobs = []
    for step in steps:
        traj = trajectories[step.trajectory_id]
        jobs.append(StepJob(traj, step, get_adapter(traj.source_format)))
    return jobs, scrubber


Prepared = Awaitable[tuple[list[tuple[TrajectoryRecord, StepRecord]], dict[str, int]]]


def _dropped(job: StepJob, reason: str, exc: Exception) -> StepResult:
    """A step given up on (its reason goes to the shard's marker and the report)."""
    step = job.step
    log.warning("step %s/%d dropped (%s): %s", step.trajectory_id, step.step_index, reason, exc)
    return StepResult(dropped=reason)


async def _replayed(
    jobs: list[StepJob], clients: Clients, settings: NapSettings
) -> list[ReplayJob]:
    """The jobs in the round's context (`builder.nap.prefix`)."""
    endpoint = clients.extra.get(COMPRESSOR_ROLE)
    try:
        return await replay_jobs(jobs, clients.teacher, endpoint, settings)
    except BatchDeferred:
        raise ShardDeferred("prefix compressions wait for a batch round") from None


class ShardDeferred(Exception):
    """Some steps of the shard wait for batch answers: nothing is written this round."""


class ShardIncomplete(Exception):
    """Some steps' requests failed after their retries: the shard's tables and its marker are
    written (its figures and drop reasons reach the report), but the marker says incomplete,
    so the same command redoes the shard, and the cache answers every request that did."""


REQUEST_FAILED = "request_failed:"


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
    prepared: Prepared | None = None,
) -> dict[str, Any]:
    """Process one shard and write its tables and marker; returns the marker's statistics.
    Loading, scrubbing and writing run in `pool`'s processes (in a thread without one);
    `prepared` is the shard's records asked for already (`schedule.prefetch_shards`)."""
    if prepared is None:
        prepared = off_loop(pool, prepare_records, out_dir, plan, scrub)
    records, redactions = await prepared
    jobs = [StepJob(traj, step, get_adapter(traj.source_format)) for traj, step in records]
    similarity = get_similarity(settings.similarity)
    replayed = await _replayed(jobs, clients, settings)

    async def one(item: ReplayJob) -> StepResult | None:
        job = item.job
        if item.skip is not None:
            result = StepResult(dropped=item.skip)
        elif item.failed is not None:  # a compression its prefix needs: the shard is redone
            result = _dropped(job, f"{REQUEST_FAILED}prefix:{item.failed.kind}", item.failed)
        else:
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
                    result = _dropped(job, "context_too_long", exc)
                except TransientLLMError as exc:  # its retries are spent: the step, not the shard
                    result = _dropped(job, f"request_failed:{exc.kind}", exc)
        result.prefixes = [item.prefix_row] if item.prefix_row is not None else []
        result = stamp(result, settings)
        result.round_steps = [round_step(job, result, settings, processed=item.skip is None)]
        on_step(result)
        return result

    # a failing step (budget refused, permanent error) lets the others' sent requests settle
    outcomes = list(await gather_settled(*(one(item) for item in replayed)))
    results = [r for r in outcomes if r is not None]
    if len(results) < len(outcomes):
        raise ShardDeferred(f"{len(outcomes) - len(results)} steps wait for a batch round")
    dropped = Counter(r.dropped for r in results if r.dropped)
    failed = {r: n for r, n in dropped.items() if r.startswith(REQUEST_FAILED)}
    stats = {
        "config_hash": digest,
        "complete": not failed,
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
    if failed:
        kinds = ", ".join(f"{r.removeprefix(REQUEST_FAILED)} x{n}" for r, n in failed.items())
        raise ShardIncomplete(
            f"{sum(failed.values())} of {len(jobs)} steps failed their requests ({kinds})"
        )
    return stats
