"""`nap-builder run`: ingest → steps → candidates → references → judgements → selection,
sharded by trajectory, resumable, and stoppable with Ctrl-C / SIGTERM.

Stages are functions over records (`builder.nap.step.process_step`). This module ingests, checks
the config hash, and hands the shards to `schedule.run_shards`; one shard's work is
`shard_work.run_shard`, which a distributed executor can call on the same plans unchanged.

Start-up order (local engine): the tokenizer is loaded, the worker processes are forked, the
ingest runs in them, and meanwhile this process imports the model clients and the NAP stages
(`load_nap_stack`, ~0.3 s of CPU that used to follow the ingest). So those modules are
imported in functions here, not at the top.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.config import PipelineConfig, config_hash, dump_resolved
from builder.ingest.formats import adapters
from builder.ingest.parallel import executor_tasks, run_ingest
from builder.nap.from_config import nap_settings
from builder.run.diagnosis import diagnose
from builder.run.ingest_state import discard_stale, ensure_ingested
from builder.run.result import RunResult
from builder.run.shards import write_json_atomic
from builder.run.workers import (
    WORKERS,
    ingest_then_warm,
    report_now,
    report_pool,
    warm_report,
    warm_shard_work,
    worker_pool,
)
from builder.storage.uri import is_remote

if TYPE_CHECKING:
    from builder.llm.factory import Clients
    from builder.nap.step import NapSettings

log = logging.getLogger(__name__)

__all__ = ["RunResult", "load_nap_stack", "nap_settings", "run_pipeline"]

NAP_STACK = (
    "builder.llm.factory",
    "builder.nap.step",
    "builder.run.schedule",
    "builder.run.finish",
)


def load_nap_stack() -> None:
    """Import what the NAP stages need and load the tokenizer (idempotent)."""
    from builder.steps.tokens import cl100k

    for module in NAP_STACK:
        importlib.import_module(module)
    cl100k()


ClientFactory = Callable[[PipelineConfig, Path], "Clients"]


def build_clients(cfg: PipelineConfig, out_dir: Path) -> Clients:
    """The default `ClientFactory` (`builder.llm.factory.build_clients`)."""
    from builder.llm.factory import build_clients as build

    return build(cfg, out_dir)


async def run_rounds(
    cfg: PipelineConfig,
    out_dir: Path,
    clients: Clients,
    digest: str,
    result: RunResult,
    settings: NapSettings,
    pool: Executor | None = None,
    prefetched: dict[str, Future[Any]] | None = None,
) -> None:
    """Pass over the unfinished shards; with batch roles, submit what a pass deferred, wait for
    the jobs, and pass again until no step waits (one round per stage a step needs)."""
    from builder.run.schedule import run_shards

    queue = clients.batch
    while True:
        result.shards_deferred = 0
        await run_shards(cfg, out_dir, clients, digest, result, settings, pool, prefetched)
        prefetched = None  # the first pass used them
        if queue is None or result.stopped or (not queue.waiting and not queue.open_jobs()):
            return
        result.batch_rounds += 1
        log.info(
            "batch round %d: %d requests deferred by %d shards",
            result.batch_rounds, queue.waiting, result.shards_deferred,
        )  # fmt: skip
        report = await queue.run_round()
        if queue.budget_error is not None:
            log.warning("%s (batch jobs already submitted are collected)", queue.budget_error)
            result.stopped = "budget"
        log.info(
            "batch round %d: %d jobs submitted (%d requests), %d answers collected, %d failed",
            result.batch_rounds, report.submitted_jobs, report.submitted_lines,
            report.collected, report.failed_lines,
        )  # fmt: skip


async def _run_then_close(
    cfg: PipelineConfig,
    out_dir: Path,
    clients: Clients,
    digest: str,
    result: RunResult,
    pool: Executor,
    prefetched: dict[str, Future[Any]] | None = None,
) -> None:
    """The shards, then the HTTP connections closed on the loop that opened them."""
    try:
        settings = nap_settings(cfg)
        await run_rounds(cfg, out_dir, clients, digest, result, settings, pool, prefetched)
    finally:
        await clients.aclose()


def run_pipeline(
    cfg: PipelineConfig,
    *,
    config_path: Path | None = None,
    clients_factory: ClientFactory | None = None,
) -> RunResult:
    """Run (or resume) a whole pipeline and write tables, report and plots under output.dir.

    `clients_factory` builds the teacher and agent clients (default: `build_clients`); tests
    inject fakes through it.
    `execution.engine` picks where the stages run; both engines write the same files. An
    object-store `output.dir` runs on a local mirror, pulled before and pushed as it goes.
    """
    factory = clients_factory or build_clients
    if is_remote(cfg.output.dir):
        from builder.storage.run_folder import mirrored

        with mirrored(cfg) as local_cfg:
            return _dispatch(local_cfg, factory, shown=cfg)
    return _dispatch(cfg, factory, shown=cfg)


def _dispatch(
    cfg: PipelineConfig, clients_factory: ClientFactory, *, shown: PipelineConfig
) -> RunResult:
    if cfg.execution.engine == "ray":
        from builder.run.progress import setup_run_logging
        from builder.run.ray.cluster import ray_session

        Path(cfg.output.dir).mkdir(parents=True, exist_ok=True)
        setup_run_logging(Path(cfg.output.dir))  # so run.log says where Ray runs
        with ray_session(cfg.execution):
            return _run(cfg, clients_factory, on_ray=True, shown=shown)
    return _run(cfg, clients_factory, on_ray=False, shown=shown)


def _run(
    cfg: PipelineConfig, clients_factory: ClientFactory, *, on_ray: bool, shown: PipelineConfig
) -> RunResult:
    """One run on a local folder; `shown` is the config as given (its output.dir may be the
    object store the folder mirrors), written to config.resolved.yaml."""
    from builder.run.progress import setup_run_logging

    started = time.perf_counter()
    out_dir = Path(cfg.output.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    setup_run_logging(out_dir)
    digest = config_hash(cfg)
    (out_dir / "config.resolved.yaml").write_text(dump_resolved(shown))
    (out_dir / "config.hash").write_text(digest + "\n")
    result = RunResult(out_dir)
    if on_ray:
        from builder.run.finish import finish_report
        from builder.run.ray.engine import RayPool

        settings = nap_settings(cfg)
        # the actors start (process, imports, tokenizer) while this process ingests on them
        pool = RayPool.start(cfg, out_dir, digest, settings, clients_factory)
        try:
            ensure_ingested(cfg, out_dir, pool.ingest)
            discard_stale(out_dir, digest)
            result.stage_seconds["ingest"] = time.perf_counter() - started
            nap_started = time.perf_counter()
            # the actors build their own clients and write their own usage
            stats = pool.run_shards(out_dir, digest, result)
        finally:
            pool.close()
        log.info("ray coordinator: %s", stats)
        result.stage_seconds["nap"] = time.perf_counter() - nap_started
        result.report = finish_report(out_dir, result, started, settings)
    else:
        _run_local(cfg, clients_factory, out_dir, digest, result, started)
    warning = result.report.get("control", {}).get("warning")
    if warning:
        log.warning("%s", warning)
    return result


def _run_local(
    cfg: PipelineConfig,
    clients_factory: ClientFactory,
    out_dir: Path,
    digest: str,
    result: RunResult,
    started: float,
) -> None:
    """The local engine: workers forked first (before any connection, thread or signal
    handler), the ingest in them while this process loads the NAP stack, then the shards,
    then the report in its own worker when it may run there."""
    from builder.steps.tokens import cl100k

    # Loaded before the workers fork, which inherit them: the adapters (ingest tasks and
    # shards need them) and the tokenizer (the ingest counts tokens, so does this process).
    adapters()
    cl100k()
    with worker_pool() as pool, report_pool() as reporter:
        warm_shard_work(pool)  # queued first: the ingest then goes to the other worker
        runner = executor_tasks(pool, WORKERS, load_nap_stack, task=ingest_then_warm)
        ensure_ingested(cfg, out_dir, functools.partial(run_ingest, runner=runner))
        if reporter is not None:
            warm_report(reporter)
        load_nap_stack()  # done already unless the ingest was up to date
        discard_stale(out_dir, digest)
        from builder.run.schedule import prefetch_shards

        prefetched = prefetch_shards(cfg, out_dir, digest, pool)
        result.stage_seconds["ingest"] = time.perf_counter() - started
        nap_started = time.perf_counter()
        clients = clients_factory(cfg, out_dir)
        try:
            work = _run_then_close(cfg, out_dir, clients, digest, result, pool, prefetched)
            asyncio.run(work)
        finally:
            clients.close()
            usage_file = out_dir / "_state" / "usage" / f"{time.time_ns()}.json"
            write_json_atomic(usage_file, clients.usage.as_dict())
            if result.shards_failed:
                result.diagnoses = diagnose(clients.usage.stages, cfg)
                for line in result.diagnoses:
                    log.error("%s", line)
        result.stage_seconds["nap"] = time.perf_counter() - nap_started
        # the shard workers have nothing left to do: they exit while the report is written
        pool.shutdown(wait=False)
        from builder.run.finish import finish_report

        if reporter is None:
            result.report = finish_report(out_dir, result, started, nap_settings(cfg))
            return
        # the report's worker has its imports loaded already
        report = reporter.submit(
            report_now, finish_report, out_dir, result, started, nap_settings(cfg)
        )
        result.report = report.result()
        result.stage_seconds.update(result.report["run"]["stage_seconds"])
        result.seconds = result.report["run"]["seconds"]
