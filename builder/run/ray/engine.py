"""A run's ingest and shards on Ray: same plans, same files, same markers as the local engine.

A fixed pool of `ShardWorker` actors is started before the ingest (`RayPool.start`): their
process start, imports and tokenizer load overlap it, and the ingest tasks
(`builder.ingest.parallel.tasks`, named by their index, writing the same `part-NNNNNN-*` files)
then run on those warm processes. The driver then hands each actor its share of the pending
shard plans, a few at a time, and settles each outcome exactly as `schedule._settle` does. A
killed actor is restarted by Ray and its in-flight shards are retried on it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from builder.config import PipelineConfig
from builder.errors import PermanentLLMError
from builder.ingest.parallel import IngestSummary, InputSpec, run_ingest, tasks
from builder.nap.step import NapSettings
from builder.run.ray.coordinator import LimitSettings
from builder.run.ray.shard_actor import Outcome, encode_plan
from builder.run.result import RunResult
from builder.run.schedule import STEPS_PER_SLOT, parallel_shards
from builder.run.shards import ShardPlan, pending_shards
from builder.scrub.settings import ScrubSettings
from builder.steps.pairing import EligibilityRules

log = logging.getLogger(__name__)
T = TypeVar("T")

LEASE_MARGIN_S = 10.0
INGEST_PER_ACTOR = 2  # ingest tasks queued per actor: one running, one waiting


def limit_settings(cfg: PipelineConfig) -> LimitSettings:
    """The coordinator's limits. A worker leases up to `block` slots a call (half its share,
    at most 16: enough to take the round trip off most requests, small enough that slots
    move between workers as their demand shifts) and keeps up to its share for itself."""
    lease = cfg.execution.lease_s or cfg.limits.timeout_s + LEASE_MARGIN_S
    share = max(1, cfg.limits.concurrency // cfg.execution.actors)
    return LimitSettings(
        concurrency=cfg.limits.concurrency,
        rpm=cfg.limits.requests_per_minute,
        tpm=cfg.limits.tokens_per_minute,
        max_usd=cfg.limits.budget_usd,
        max_tokens=cfg.limits.budget_tokens,
        lease_s=lease,
        out_dir=str(Path(cfg.output.dir)),
        block=min(16, max(1, share // 2)),
        share=share,
    )


@dataclass
class RayPool:
    """The coordinator and the shard actors of one run."""

    cfg: PipelineConfig
    coordinator: Any
    actors: list[Any]
    per_actor: int
    stats: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        cfg: PipelineConfig,
        out_dir: Path,
        digest: str,
        settings: NapSettings,
        clients_factory: Any,
    ) -> RayPool:
        """Create the coordinator and every actor at once (Ray starts them in parallel; this
        does not wait for them)."""
        from builder.run.ray.actors import CoordinatorActor, shard_actor_class

        ex = cfg.execution
        limits = limit_settings(cfg)
        coordinator = CoordinatorActor.remote(limits)
        width = parallel_shards(cfg.limits.concurrency, cfg.output.shard_size)
        per_actor = ex.shards_per_actor or -(-width // ex.actors)
        total_steps = cfg.limits.steps_in_flight or STEPS_PER_SLOT * cfg.limits.concurrency
        actor_class = shard_actor_class(ex.actor_cpus, per_actor)
        actors = [
            actor_class.remote(
                cfg,
                str(out_dir),
                digest,
                settings,
                coordinator,
                clients_factory,
                max(1, total_steps // ex.actors),
                limits,
            )
            for _ in range(ex.actors)
        ]
        return cls(cfg, coordinator, actors, per_actor)

    def ingest(
        self,
        specs: list[InputSpec],
        out_dir: Path,
        *,
        rules: EligibilityRules | None = None,
        scrub: ScrubSettings | None = None,
    ) -> IngestSummary:
        """`run_ingest` with its tasks run on the actors (same files, same cross-task dedup)."""
        return run_ingest(specs, out_dir, rules=rules, runner=self._ingest_tasks, scrub=scrub)

    def _ingest_tasks(
        self,
        specs: Iterable[InputSpec],
        out_dir: Path,
        rules: EligibilityRules,
        scrub: ScrubSettings,
    ) -> Iterator[tuple[int, IngestSummary]]:
        """Each task on the actor with the fewest queued, at most `INGEST_PER_ACTOR` each."""
        import ray

        def submit(actor: Any, task: tuple[int, Any]) -> Any:
            return actor.ingest.remote(task[0], task[1], str(out_dir), rules, scrub)

        for (task_id, _), ref in spread(
            self.actors, enumerate(tasks(specs)), INGEST_PER_ACTOR, submit
        ):
            yield task_id, ray.get(ref)

    def run_shards(self, out_dir: Path, digest: str, result: RunResult) -> dict[str, Any]:
        """Every pending shard on the actors, at most `per_actor` each at once; returns the
        coordinator's statistics."""
        import ray

        todo, result.shards_skipped = pending_shards(out_dir, self.cfg.output.shard_size, digest)
        result.shards_total = len(todo) + result.shards_skipped
        if not todo:
            return {}
        ray.get([actor.ready.remote() for actor in self.actors])  # a worker that cannot start

        def submit(actor: Any, plan: ShardPlan) -> Any:
            return actor.run.remote(encode_plan(plan))

        def stopped() -> bool:
            return result.stopped is not None

        for plan, ref in spread(self.actors, todo, self.per_actor, submit, stopped):
            settle(outcome(ref, plan), result)
        return dict(ray.get(self.coordinator.stats.remote()))

    def close(self) -> None:
        import ray

        for actor in [*self.actors, self.coordinator]:
            ray.kill(actor)


def spread(
    actors: list[Any],
    items: Iterable[T],
    cap: int,
    submit: Callable[[Any, T], Any],
    stopped: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[T, Any]]:
    """Each item submitted to the actor with the fewest running, at most `cap` each; yields
    (item, its finished ref) as they finish. Items are drawn only when an actor has room (a
    lazy ingest listing stays lazy), and none once `stopped()`."""
    import ray

    pending = iter(items)
    running: dict[Any, tuple[T, int]] = {}  # ref -> (item, actor index)
    load = [0] * len(actors)
    while True:
        while min(load) < cap and not stopped():
            try:
                item = next(pending)
            except StopIteration:
                break
            k = load.index(min(load))
            running[submit(actors[k], item)] = (item, k)
            load[k] += 1
        if not running:
            return
        done, _ = ray.wait(list(running))
        for ref in done:
            item, k = running.pop(ref)
            load[k] -= 1
            yield item, ref


def outcome(ref: Any, plan: ShardPlan) -> Outcome:
    """A shard's outcome; an actor lost for good (restarts spent) fails only its shards."""
    import ray

    try:
        shard, status, message = ray.get(ref)
        return str(shard), str(status), str(message)
    except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as exc:
        return plan.shard_id, "failed", f"{type(exc).__name__}: {exc}"


def settle(row: Outcome, result: RunResult) -> None:
    """One shard's outcome, counted as the local scheduler counts it."""
    shard, status, message = row
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
