"""Scheduling of shards: how many run at once, how signals stop them, how failures count."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

from builder.config import PipelineConfig
from builder.errors import BudgetExceededError, LLMError, PermanentLLMError
from builder.llm.factory import Clients
from builder.nap.step import NapSettings, StepResult
from builder.report.savings import tokens_saved
from builder.run.result import RunResult
from builder.run.shard_io import prepare_records
from builder.run.shard_work import Prepared, ScrubSettings, ShardDeferred, run_shard
from builder.run.shards import ShardPlan, pending_shards, step_totals
from builder.run.status_line import Status

log = logging.getLogger(__name__)

STEPS_PER_SLOT = 2
TICK_S = 0.5  # status line refresh between steps


def parallel_shards(concurrency: int, shard_size: int) -> int:
    """Shards in flight: enough trajectories (about 2 x concurrency) to keep every request slot
    busy across the per-step dependency chains, at least 2."""
    return max(2, -(-2 * concurrency // shard_size))


def shard_width(cfg: PipelineConfig) -> int:
    """Shards started at once under this config."""
    if cfg.limits.steps_in_flight == 1:
        return 1  # one step at a time: one shard at a time keeps the order simple
    return parallel_shards(cfg.limits.concurrency, cfg.output.shard_size)


def prefetch_shards(
    cfg: PipelineConfig, out_dir: Path, digest: str, pool: Executor
) -> dict[str, Future[Any]]:
    """Ask the workers for the first shards' records now (call it as soon as the ingest is
    done): they are loaded and scrubbed while this process builds its clients and starts its
    loop, instead of after (~40 ms before the first request on the bench job)."""
    todo, _ = pending_shards(out_dir, cfg.output.shard_size, digest)
    scrub = ScrubSettings.of(cfg.scrub)
    first = todo[: shard_width(cfg)]
    return {plan.shard_id: pool.submit(prepare_records, out_dir, plan, scrub) for plan in first}


class _Stopper:
    """First SIGINT/SIGTERM: finish in-flight shards, start no new one. Second: abandon them."""

    def __init__(self) -> None:
        self.requested = False
        self.signalled = False
        self.abandoned = 0
        self.forced = False
        self.tasks: set[asyncio.Task[Any]] = set()

    def __call__(self, signum: int) -> None:
        name = signal.Signals(signum).name
        if not self.requested:
            self.requested = True
            self.signalled = True
            log.warning(
                "%s: finishing the shards in flight, then stopping (again to abandon them)", name
            )
            return
        log.warning("%s again: abandoning the shards in flight; completed shards are kept", name)
        self.forced = True
        self.abandoned = len(self.tasks)
        for task in self.tasks:
            task.cancel()


async def run_shards(
    cfg: PipelineConfig,
    out_dir: Path,
    clients: Clients,
    digest: str,
    result: RunResult,
    settings: NapSettings,
    pool: Executor | None = None,
    prefetched: dict[str, Future[Any]] | None = None,
) -> None:
    """Every shard not yet complete for this config hash, several at a time, until done or
    stopped (signal, budget). Each shard's loading and writing runs in `pool` (see
    runner/workers.py), or in threads without one; `prefetched` holds records asked for
    already (`prefetch_shards`), used once."""
    from builder.run.progress import RunProgress

    scrub = ScrubSettings.of(cfg.scrub)
    todo, skipped = pending_shards(out_dir, cfg.output.shard_size, digest)
    result.shards_total = len(todo) + skipped
    result.shards_skipped += skipped
    total_steps, done_steps = step_totals(out_dir, todo, digest)
    progress = RunProgress(
        total_steps, done_steps, cfg.output.progress, log_every_s=cfg.output.log_every_s
    )
    counters: Counter[str] = Counter()

    def on_step(step_result: StepResult) -> None:
        counters["passing"] += sum(
            1 for j in step_result.judgements if j.passed and not j.is_control
        )
        for j in step_result.judgements:
            if j.is_control:
                counters["control_steps"] += 1
                counters["control_passed"] += j.passed
        counters["saved_tokens"] += tokens_saved(step_result.supervision)  # as in the report
        progress.step_done()

    def refresh() -> None:
        progress.show(run_status(clients, counters, budget_usd=cfg.limits.budget_usd))

    ticker = asyncio.create_task(_tick(refresh, TICK_S), name="progress")
    stopper = _Stopper()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopper, signum)
    queue = iter(todo)
    width = shard_width(cfg)
    # Bounded steps in flight make a pipeline: the later rounds of started steps (judge waves)
    # are not queued behind the first requests of every other step, so the tail is short.
    steps_in_flight = cfg.limits.steps_in_flight or STEPS_PER_SLOT * cfg.limits.concurrency
    step_slots = asyncio.Semaphore(steps_in_flight)
    early = dict(prefetched or {})

    def start(plan: ShardPlan) -> asyncio.Task[Any]:
        ready: Prepared | None = None
        if plan.shard_id in early:
            ready = asyncio.wrap_future(early.pop(plan.shard_id))
        work = run_shard(
            plan, out_dir, clients, settings, scrub, digest, on_step, step_slots, pool, ready
        )
        return asyncio.create_task(work, name=plan.shard_id)

    try:
        while True:
            while len(stopper.tasks) < width and not stopper.requested:
                upcoming = next(queue, None)
                if upcoming is None:
                    break
                stopper.tasks.add(start(upcoming))
            if not stopper.tasks:
                break
            done, _ = await asyncio.wait(stopper.tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                stopper.tasks.discard(task)
                _settle(task, result, stopper)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        ticker.cancel()
        refresh()
        progress.close()
    not_started = sum(1 for _ in queue)
    if stopper.signalled:
        _describe_interrupt(result, stopper, not_started)


def _describe_interrupt(result: RunResult, stopper: _Stopper, not_started: int) -> None:
    """Say what a signal really did: abandoned shards, unstarted ones, or nothing at all."""
    if stopper.forced:
        result.stopped = "interrupted"
        result.stop_detail = (
            f"interrupted twice: {stopper.abandoned} shard(s) in flight abandoned, "
            f"{not_started} not started"
        )
    elif not_started:
        result.stopped = result.stopped or "interrupted"
        result.stop_detail = (
            f"interrupted: the shards in flight were finished, {not_started} shard(s) not started"
        )
    elif result.stopped is None:
        log.warning("interrupt received after every shard had started: the run completed")
        result.stop_detail = "interrupt received after every shard had started; run completed"


async def _tick(refresh: Callable[[], None], every_s: float) -> None:
    """Redraw the status between steps too: a run held by a limit finishes no step for a
    while, and that is when the reason must show."""
    while True:
        await asyncio.sleep(every_s)
        refresh()


def run_status(clients: Clients, counters: Counter[str], budget_usd: float | None) -> Status:
    """The status line's figures: every endpoint's limits (once each, as roles may share
    them), the usage so far and the yield counters."""
    roles = [clients.teacher, clients.agent, *clients.extra.values()]
    limits = list({id(c.limits): c.limits for c in roles}.values())
    holds = [h for h in (getattr(lim, "hold", lambda: None)() for lim in limits) if h]
    errors = [lim.last_error for lim in limits if getattr(lim, "backing_off", 0)]
    total = clients.usage.total()
    lookups = total.cache_hits + total.cache_misses
    return Status(
        in_flight=sum(lim.in_flight for lim in limits),
        concurrency=sum(getattr(lim, "max_in_flight", 0) for lim in limits),
        queued=sum(getattr(lim, "queued", 0) for lim in limits),
        hold=max(holds, key=lambda h: h.seconds, default=None),
        backing_off=sum(getattr(lim, "backing_off", 0) for lim in limits),
        last_error=errors[0] if errors else None,
        cost_usd=total.cost_usd,
        budget_usd=budget_usd,
        passing=counters["passing"],
        tokens_saved=counters["saved_tokens"],
        control=_rate(counters["control_passed"], counters["control_steps"]),
        cache_hit_rate=total.cache_hits / lookups if lookups else None,
        errors=sum(total.errors.values()),
    )


def _rate(part: int, whole: int) -> str:
    """The control's pass rate so far, as the progress line shows it."""
    return f"{part / whole:.0%}" if whole else "-"


def _settle(task: asyncio.Task[Any], result: RunResult, stopper: _Stopper) -> None:
    """Account for a finished shard task; a permanent error ends the run, others are counted."""
    if task.cancelled():
        result.stopped = result.stopped or "interrupted"
        return
    error = task.exception()
    if error is None:
        result.shards_done += 1
        return
    if isinstance(error, ShardDeferred):
        result.shards_deferred += 1
        return
    if isinstance(error, BudgetExceededError):
        log.warning("budget reached (%s): no new work is scheduled", error)
        result.stopped = "budget"
        stopper.requested = True
        return
    if isinstance(error, PermanentLLMError):
        raise error
    result.shards_failed += 1
    kind = type(error).__name__ if not isinstance(error, LLMError) else "llm_error"
    log.error(
        "shard %s failed (%s): %s; it will be retried on resume", task.get_name(), kind, error
    )
