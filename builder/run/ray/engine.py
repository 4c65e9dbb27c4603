"""A run's ingest and shards on Ray: same plans, same files, same markers as the local engine.

Ingest: each ingest task (`builder.ingest.parallel.tasks`, named by its index) is a Ray task writing
the same `part-NNNNNN-*` files. Shards: a Ray Data dataset of the pending shard plans, one
block per shard (a killed actor costs only its in-flight shards; Ray Data restarts the actor
and retries them), mapped by a pool of `ShardWorker` actors. The driver settles each shard's
outcome row exactly as `schedule._settle` does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from builder.config import PipelineConfig
from builder.errors import PermanentLLMError
from builder.ingest.parallel import IngestSummary, InputSpec, process_task, run_ingest, tasks
from builder.nap.step import NapSettings
from builder.run.ray.coordinator import LimitSettings
from builder.run.ray.shard_actor import ShardWorker, encode_plan
from builder.run.result import RunResult
from builder.run.schedule import STEPS_PER_SLOT, parallel_shards
from builder.run.shards import pending_shards
from builder.scrub.settings import ScrubSettings
from builder.steps.pairing import EligibilityRules

log = logging.getLogger(__name__)

LEASE_MARGIN_S = 10.0


def ray_ingest(
    specs: list[InputSpec],
    out_dir: Path,
    *,
    rules: EligibilityRules | None = None,
    scrub: ScrubSettings | None = None,
) -> IngestSummary:
    """`run_ingest` with its tasks run as Ray tasks (same files, same cross-task dedup)."""
    return run_ingest(specs, out_dir, rules=rules, runner=ray_tasks, scrub=scrub)


def ray_tasks(
    specs: Iterable[InputSpec], out_dir: Path, rules: EligibilityRules, scrub: ScrubSettings
) -> Iterator[tuple[int, IngestSummary]]:
    """Each ingest task as a Ray task; at most two per cluster CPU queued at once."""
    import ray

    remote: Any = ray.remote(num_cpus=1, max_retries=3)(process_task)
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    pending: dict[Any, int] = {}
    for task_id, group in enumerate(tasks(specs)):
        pending[remote.remote(task_id, group, out_dir, rules, scrub)] = task_id
        if len(pending) >= window:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
    for ref, task_id in pending.items():
        yield task_id, ray.get(ref)


def limit_settings(cfg: PipelineConfig) -> LimitSettings:
    lease = cfg.execution.lease_s or cfg.limits.timeout_s + LEASE_MARGIN_S
    return LimitSettings(
        concurrency=cfg.limits.concurrency,
        rpm=cfg.limits.requests_per_minute,
        tpm=cfg.limits.tokens_per_minute,
        max_usd=cfg.limits.budget_usd,
        max_tokens=cfg.limits.budget_tokens,
        lease_s=lease,
        out_dir=str(Path(cfg.output.dir)),
    )


def actor_pool(size: int, per_actor: int) -> dict[str, Any]:
    """`map_batches` arguments of a fixed pool of `size` actors, each running `per_actor`
    shards at once on its async loop (the option's name depends on the Ray version)."""
    import ray

    try:
        strategy = ray.data.ActorPoolStrategy(
            size=size,
            max_tasks_in_flight_per_actor=per_actor,
            max_concurrent_calls_per_actor=per_actor,
        )
    except TypeError:  # Ray < 2.50: the actor's own max_concurrency option
        return {"concurrency": size, "max_concurrency": per_actor}
    return {"compute": strategy}


def run_shards_ray(
    cfg: PipelineConfig,
    out_dir: Path,
    digest: str,
    result: RunResult,
    settings: NapSettings,
    clients_factory: Any,
) -> dict[str, Any]:
    """Every pending shard on the actor pool; returns the coordinator's statistics."""
    import ray

    from builder.run.ray.actors import CoordinatorActor

    todo, result.shards_skipped = pending_shards(out_dir, cfg.output.shard_size, digest)
    result.shards_total = len(todo) + result.shards_skipped
    if not todo:
        return {}
    ex = cfg.execution
    ray.data.DataContext.get_current().enable_progress_bars = cfg.output.progress
    coordinator = CoordinatorActor.remote(limit_settings(cfg))
    total_steps = cfg.limits.steps_in_flight or STEPS_PER_SLOT * cfg.limits.concurrency
    actors = min(ex.actors, len(todo))
    width = parallel_shards(cfg.limits.concurrency, cfg.output.shard_size)
    per_actor = ex.shards_per_actor or -(-width // actors)
    try:
        dataset = ray.data.from_items(
            [{"plan": encode_plan(p)} for p in todo], override_num_blocks=len(todo)
        )
        outcomes = dataset.map_batches(
            ShardWorker,
            batch_size=1,
            num_cpus=ex.actor_cpus,
            **actor_pool(actors, per_actor),
            fn_constructor_kwargs={
                "cfg": cfg,
                "out_dir": str(out_dir),
                "digest": digest,
                "settings": settings,
                "coordinator": coordinator,
                "clients_factory": clients_factory,
                "steps_in_flight": max(1, total_steps // actors),
            },
        )
        for row in outcomes.iter_rows():
            settle(row, result)
        return dict(ray.get(coordinator.stats.remote()))
    finally:
        ray.kill(coordinator)


def settle(row: dict[str, Any], result: RunResult) -> None:
    """One shard's outcome, counted as the local scheduler counts it."""
    status, message, shard = row["status"], row["message"], row["shard_id"]
    if status == "done":
        result.shards_done += 1
    elif status == "budget":
        if result.stopped != "budget":
            log.warning("budget reached (%s): the remaining shards are not processed", message)
        result.stopped = "budget"
    elif status == "permanent":
        raise PermanentLLMError(message)
    else:
        result.shards_failed += 1
        log.error("shard %s failed (%s); it will be retried on resume", shard, message)
