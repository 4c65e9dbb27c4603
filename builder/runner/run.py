"""`nap-builder run`: ingest → steps → candidates → references → judgements → selection,
sharded by trajectory, resumable, and stoppable with Ctrl-C / SIGTERM.

Stages are functions over records (`builder.nap.process_step`); this module only schedules
shards, writes their tables and markers, and reports. A distributed executor can call
`run_shard` on the same plans unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder import __version__
from builder.actions.similarity import get_similarity
from builder.config import PipelineConfig, config_hash, dump_resolved
from builder.errors import BudgetExceededError, LLMError, PermanentLLMError
from builder.formats import get_adapter
from builder.ingest import InputSpec, format_summary, run_ingest
from builder.llm.factory import Clients, build_clients
from builder.nap import NapSettings, StepJob, StepResult, process_step
from builder.runner.shards import (
    NAP_TABLES,
    ShardPlan,
    load_shard,
    marker_path,
    plan_shards,
    read_json,
    read_marker,
    write_json_atomic,
)
from builder.scrub import Scrubber
from builder.shards import write_table_atomic
from builder.steps import EligibilityRules
from schemas.candidates import CANDIDATE_SCHEMA
from schemas.common import to_table
from schemas.judgements import JUDGEMENT_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.references import REFERENCE_SCHEMA
from schemas.supervision import SUPERVISION_SCHEMA

log = logging.getLogger(__name__)

SCHEMAS = {
    "candidates": CANDIDATE_SCHEMA,
    "references": REFERENCE_SCHEMA,
    "judgements": JUDGEMENT_SCHEMA,
    "supervision": SUPERVISION_SCHEMA,
    "preferences": PREFERENCE_SCHEMA,
}


STEPS_PER_SLOT = 2


def parallel_shards(concurrency: int, shard_size: int) -> int:
    """Shards in flight: enough trajectories (about 2 x concurrency) to keep every request slot
    busy across the per-step dependency chains, at least 2."""
    return max(2, -(-2 * concurrency // shard_size))


@dataclass
class RunResult:
    out_dir: Path
    shards_total: int = 0
    shards_done: int = 0
    shards_skipped: int = 0
    shards_failed: int = 0
    stopped: str | None = None  # interrupted | budget
    report: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.stopped == "interrupted":
            return 130
        if self.stopped == "budget" or self.shards_failed:
            return 3
        return 0

    def summary_text(self) -> str:
        totals = self.report.get("totals", {})
        lines = [
            f"run output: {self.out_dir}",
            f"shards: {self.shards_done + self.shards_skipped}/{self.shards_total} complete "
            f"({self.shards_skipped} resumed, {self.shards_failed} failed)",
            f"time: {self.seconds:.1f} s",
        ]
        for key in ("trajectories", "eligible_steps", "candidates", "passing", "selected"):
            if key in totals:
                lines.append(f"{key}: {totals[key]}")
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}; run the same command again to resume")
        lines.append(f"report: {self.out_dir / 'report.md'}")
        return "\n".join(lines)


def nap_settings(cfg: PipelineConfig) -> NapSettings:
    """The NAP core's settings from a pipeline config."""
    return NapSettings(
        teacher_samples=cfg.teacher.samples,
        teacher_temperature=cfg.teacher.temperature,
        teacher_max_tokens=cfg.teacher.max_tokens,
        rules=tuple(cfg.teacher.rules),
        reference_mode=cfg.references.mode,
        reference_samples=cfg.references.samples,
        reference_temperature=cfg.references.temperature,
        agent_temperature=cfg.agent.temperature,
        agent_max_tokens=cfg.agent.max_tokens,
        format_retries=cfg.agent.format_retries,
        similarity=cfg.gate.similarity,
        aggregate=cfg.gate.aggregate,
        top_k=cfg.gate.top_k,
        threshold=cfg.gate.threshold,
        max_per_step=cfg.selection.max_per_step,
        fallback=cfg.selection.fallback,
        exhaustive=cfg.selection.exhaustive,
        max_preference_pairs=cfg.selection.max_preference_pairs,
        seed=cfg.seed,
    )


def ensure_ingested(cfg: PipelineConfig, out_dir: Path) -> None:
    """Ingest once per (inputs, eligibility); a change re-ingests and discards NAP tables."""
    key = {
        "inputs": [i.model_dump() for i in cfg.inputs],
        "eligibility": cfg.eligibility.model_dump(),
        "builder": __version__,
    }
    marker = out_dir / "_state" / "ingest.json"
    if marker.exists() and read_json(marker) == key:
        log.info("ingest: up to date, skipped")
        return
    for table in ("trajectories", "steps", "quarantine", *NAP_TABLES):
        shutil.rmtree(out_dir / table, ignore_errors=True)
    shutil.rmtree(out_dir / "_state" / "shards", ignore_errors=True)
    specs = [
        InputSpec(i.path, None if i.format == "auto" else i.format, dict(i.options))
        for i in cfg.inputs
    ]
    rules = EligibilityRules(
        cfg.eligibility.min_tokens,
        cfg.eligibility.require_focus,
        cfg.eligibility.max_observation_chars,
    )
    summary = run_ingest(specs, out_dir, rules=rules)
    log.info("ingest summary:\n%s", format_summary(summary))
    write_json_atomic(marker, key)


def discard_stale(out_dir: Path, digest: str) -> None:
    """NAP tables of another config cannot be mixed with this one's: drop them."""
    marker = out_dir / "_state" / "config.hash"
    previous = marker.read_text().strip() if marker.exists() else None
    if previous is not None and previous != digest:
        log.warning(
            "config changed since the last run in %s (%s → %s): discarding its NAP tables; "
            "the request cache keeps unchanged requests free",
            out_dir,
            previous,
            digest,
        )
        for table in NAP_TABLES:
            shutil.rmtree(out_dir / table, ignore_errors=True)
        shutil.rmtree(out_dir / "_state" / "shards", ignore_errors=True)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(digest + "\n")


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
    scrubber = Scrubber(emails=scrub.emails) if scrub.enabled else None
    if scrubber is not None:
        wanted = {s.trajectory_id for s in steps}
        trajectories = {
            k: scrubber.scrub_trajectory(t) for k, t in trajectories.items() if k in wanted
        }
        steps = [scrubber.scrub_step(s) for s in steps]
    jobs = []
    for step in steps:
        traj = trajectories[step.trajectory_id]
        jobs.append(StepJob(traj, step, get_adapter(traj.source_format)))
    return jobs, scrubber


def write_shard(
    out_dir: Path, plan: ShardPlan, results: list[StepResult], stats: dict[str, Any]
) -> None:
    """The shard's tables (atomically), then its completion marker."""
    rows: dict[str, list[Any]] = {t: [] for t in NAP_TABLES}
    for result in results:
        for table in NAP_TABLES:
            rows[table].extend(getattr(result, table))
    for table in NAP_TABLES:
        write_table_atomic(
            to_table(rows[table], SCHEMAS[table]), out_dir / table / f"{plan.shard_id}.parquet"
        )
    write_json_atomic(marker_path(out_dir, plan.shard_id), stats)


async def run_shard(
    plan: ShardPlan,
    out_dir: Path,
    clients: Clients,
    settings: NapSettings,
    scrub: ScrubSettings,
    digest: str,
    on_step: Callable[[StepResult], None] = lambda _: None,
    step_slots: asyncio.Semaphore | None = None,
) -> dict[str, Any]:
    """Process one shard and write its tables and marker; returns the marker's statistics."""
    jobs, scrubber = await asyncio.to_thread(prepare_shard, out_dir, plan, scrub)
    similarity = get_similarity(settings.similarity)

    async def one(job: StepJob) -> StepResult:
        async with step_slots or contextlib.nullcontext():
            try:
                result = await process_step(
                    job, clients.teacher, clients.agent, settings, similarity
                )
            except PermanentLLMError as exc:
                if exc.kind != "context_length":
                    raise
                step = job.step
                log.warning("step %s/%d dropped: %s", step.trajectory_id, step.step_index, exc)
                result = StepResult(dropped="context_too_long")
        on_step(result)
        return result

    results = list(await asyncio.gather(*(one(job) for job in jobs)))
    dropped = Counter(r.dropped for r in results if r.dropped)
    stats = {
        "config_hash": digest,
        "trajectories": len(plan.trajectory_ids),
        "eligible_steps": len(jobs),
        "dropped": dict(dropped),
        "agent_requests": sum(r.agent_requests for r in results),
        "judge_requests": sum(r.judge_requests for r in results),
        "judge_requests_exhaustive": sum(r.judge_requests_exhaustive for r in results),
        "redactions": dict(scrubber.counts) if scrubber else {},
    }
    await asyncio.to_thread(write_shard, out_dir, plan, results, stats)
    return stats


class _Stopper:
    """First SIGINT/SIGTERM: finish in-flight shards, start no new one. Second: abandon them."""

    def __init__(self) -> None:
        self.requested = False
        self.tasks: set[asyncio.Task[Any]] = set()

    def __call__(self, signum: int) -> None:
        name = signal.Signals(signum).name
        if not self.requested:
            self.requested = True
            log.warning(
                "%s: finishing the shards in flight, then stopping (again to abandon them)", name
            )
            return
        log.warning("%s again: abandoning the shards in flight; completed shards are kept", name)
        for task in self.tasks:
            task.cancel()


async def _run_shards(
    cfg: PipelineConfig, out_dir: Path, clients: Clients, digest: str, result: RunResult
) -> None:
    from builder.runner.progress import StageProgress

    settings = nap_settings(cfg)
    scrub = ScrubSettings(cfg.scrub.enabled, cfg.scrub.emails)
    plans = list(plan_shards(out_dir, cfg.output.shard_size))
    result.shards_total = len(plans)
    todo = []
    for plan in plans:
        marker = read_marker(out_dir, plan.shard_id)
        if marker is not None and marker.get("config_hash") == digest:
            result.shards_skipped += 1
        else:
            todo.append(plan)
    progress = StageProgress("shards", len(todo), enabled=cfg.output.progress)
    counters: Counter[str] = Counter()

    def on_step(step_result: StepResult) -> None:
        counters["steps"] += 1
        counters["passing"] += sum(1 for j in step_result.judgements if j.passed)
        counters["saved_tokens"] += sum(
            (s.raw_tokens or 0) - (s.rendered_tokens or 0) for s in step_result.supervision
        )
        total = clients.usage.total()
        lookups = total.cache_hits + total.cache_misses
        progress.advance(
            0,
            steps=counters["steps"],
            passing=counters["passing"],
            tokens_saved=counters["saved_tokens"],
            cost=f"${total.cost_usd:.4f}",
            cache=f"{total.cache_hits / lookups:.0%}" if lookups else "-",
            errors=sum(total.errors.values()),
        )

    stopper = _Stopper()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopper, signum)
    queue = iter(todo)
    width = parallel_shards(cfg.limits.concurrency, cfg.output.shard_size)
    # Bounded steps in flight make a pipeline: the later rounds of started steps (judge waves)
    # are not queued behind the first requests of every other step, so the tail is short.
    steps_in_flight = cfg.limits.steps_in_flight or STEPS_PER_SLOT * cfg.limits.concurrency
    step_slots = asyncio.Semaphore(steps_in_flight)
    if steps_in_flight == 1:
        width = 1  # one step at a time: one shard at a time keeps the order simple
    try:
        while True:
            while len(stopper.tasks) < width and not stopper.requested:
                upcoming = next(queue, None)
                if upcoming is None:
                    break
                task = asyncio.create_task(
                    run_shard(
                        upcoming, out_dir, clients, settings, scrub, digest, on_step, step_slots
                    ),
                    name=upcoming.shard_id,
                )
                stopper.tasks.add(task)
            if not stopper.tasks:
                break
            done, _ = await asyncio.wait(stopper.tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                stopper.tasks.discard(task)
                _settle(task, result, stopper)
                progress.advance(1)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        progress.close()
    if stopper.requested and result.stopped is None:
        result.stopped = "interrupted"


def _settle(task: asyncio.Task[Any], result: RunResult, stopper: _Stopper) -> None:
    """Account for a finished shard task; a permanent error ends the run, others are counted."""
    if task.cancelled():
        result.stopped = result.stopped or "interrupted"
        return
    error = task.exception()
    if error is None:
        result.shards_done += 1
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


ClientFactory = Callable[[PipelineConfig, Path], Clients]


def run_pipeline(
    cfg: PipelineConfig,
    *,
    config_path: Path | None = None,
    clients_factory: ClientFactory = build_clients,
) -> RunResult:
    """Run (or resume) a whole pipeline and write tables, report and plots under output.dir.

    `clients_factory` builds the teacher and agent clients; tests inject fakes through it.
    """
    from builder.runner.progress import setup_run_logging

    started = time.perf_counter()
    out_dir = Path(cfg.output.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    setup_run_logging(out_dir)
    digest = config_hash(cfg)
    (out_dir / "config.resolved.yaml").write_text(dump_resolved(cfg))
    (out_dir / "config.hash").write_text(digest + "\n")
    result = RunResult(out_dir)
    ensure_ingested(cfg, out_dir)
    discard_stale(out_dir, digest)
    result.stage_seconds["ingest"] = time.perf_counter() - started
    clients = clients_factory(cfg, out_dir)
    try:
        nap_started = time.perf_counter()
        asyncio.run(_run_shards(cfg, out_dir, clients, digest, result))
        result.stage_seconds["nap"] = time.perf_counter() - nap_started
    finally:
        clients.close()
        write_json_atomic(
            out_dir / "_state" / "usage" / f"{time.time_ns()}.json", clients.usage.as_dict()
        )
    report_started = time.perf_counter()
    result.report = finish_report(out_dir, result)
    result.stage_seconds["report"] = time.perf_counter() - report_started
    result.seconds = time.perf_counter() - started
    return result


def finish_report(out_dir: Path, result: RunResult) -> dict[str, Any]:
    """report.json, report.md and plots from the tables and the markers of every shard."""
    from builder.runner.plots import write_plots
    from builder.runner.report import build_report, write_report

    markers = [read_json(p) for p in sorted((out_dir / "_state" / "shards").glob("*.json"))]
    markers = [m for m in markers if isinstance(m, dict)]
    made = sum(m.get("agent_requests", 0) for m in markers)
    judged = sum(m.get("judge_requests", 0) for m in markers)
    exhaustive = sum(m.get("judge_requests_exhaustive", 0) for m in markers)
    redactions: Counter[str] = Counter()
    for m in markers:
        redactions.update(m.get("redactions", {}))
    usage = merge_usage(out_dir)
    dropped: Counter[str] = Counter()
    for m in markers:
        dropped.update(m.get("dropped", {}))
    extra = {
        "dropped_steps": {"by reason (run)": dict(sorted(dropped.items()))},
        "early_exit": {
            "agent requests (references + judgements)": made,
            "agent requests for judging": judged,
            "agent requests for judging, exhaustive": exhaustive,
            "agent requests saved by early exit": max(0, exhaustive - judged),
        },
        "redactions": dict(sorted(redactions.items())),
        "run": dataclasses.asdict(result) | {"out_dir": str(out_dir)},
    }
    report = build_report(out_dir, usage=usage, extra=extra)
    write_report(out_dir, report)
    write_plots(out_dir, intent_of=intent_of)
    return report


def intent_of(command: str | None) -> str:
    """The intent class of a step's command (the last unit of a sequence), for the plots."""
    from builder.actions.features import shell_features

    if not command:
        return "none"
    units = shell_features(command)
    return units[-1].intent if units else "unknown"


def merge_usage(out_dir: Path) -> dict[str, Any]:
    """Usage summed over every invocation of this run (a resumed run has several)."""
    stages: dict[str, dict[str, float]] = {}
    total: dict[str, float] = {}
    for path in sorted((out_dir / "_state" / "usage").glob("*.json")):
        data = read_json(path) or {}
        for name, values in data.get("stages", {}).items():
            counter = stages.setdefault(name, {})
            for key, value in values.items():
                items = value.items() if isinstance(value, dict) else [("", value)]
                for kind, number in items:
                    if isinstance(number, int | float):
                        label = f"{key}.{kind}" if kind else key
                        counter[label] = counter.get(label, 0) + number
                        total[label] = total.get(label, 0) + number
    return {"stages": stages, "total": total}
