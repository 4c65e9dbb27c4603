"""`nap-builder eval`: every eligible step (of the inputs, or of a published split) compressed by
each compressor and judged by the configured gate; tables and reports under OUT/eval/.

Ingest, scrubbing, clients (cache, limits, budget) and the gate are the run's own, so the
figures are comparable with the run's and requests the run already made cost nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.config import EndpointConfig, PipelineConfig
from builder.errors import ConfigError, PermanentLLMError
from builder.evaluate.compressors import Spec, compress, parse_specs
from builder.evaluate.eval_report import write_outputs
from builder.evaluate.split import split_trajectories
from builder.evaluate.step_verdict import base_record, judge_step
from builder.llm.factory import COMPRESSOR_ROLE, Clients, build_clients
from builder.nap.from_config import nap_settings, sampling_of
from builder.nap.step import NapSettings, Similarity, StepJob, references_for
from builder.run.ingest_state import ensure_ingested, ingest_key, ingest_marker
from builder.run.shard_work import ScrubSettings, prepare_shard
from builder.run.shards import ShardPlan, plan_shards, read_json
from builder.similarity.compare import get_similarity
from schemas.eval_steps import EvalStepRecord

log = logging.getLogger(__name__)

CONTEXT_TOO_LONG = "context_too_long"
ClientFactory = Callable[..., Clients]


@dataclass
class EvalResult:
    out_dir: Path
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)  # by compressor name
    markdown: Path | None = None
    plot: Path | None = None
    seconds: float = 0.0

    def summary_text(self) -> str:
        lines = []
        for name, r in self.reports.items():
            rate = r.get("preservation_rate")
            saved = r.get("tokens_saved_fraction")
            lines.append(
                f"{name}: {r['preserved']}/{r['steps']} preserved"
                + (f" ({rate:.0%})" if rate is not None else "")
                + (f", tokens saved {saved:.0%}" if saved is not None else "")
            )
        lines.append(f"wrote {self.markdown} ({self.seconds:.1f}s)")
        return "\n".join(lines)


def eval_jobs(cfg: PipelineConfig, out_dir: Path, wanted: set[str] | None) -> list[StepJob]:
    """Eligible steps of the ingested trajectories (only `wanted` ones when given), scrubbed
    as the run scrubs them before any model sees them."""
    scrub = ScrubSettings(cfg.scrub.enabled, cfg.scrub.emails)
    jobs: list[StepJob] = []
    for plan in plan_shards(out_dir, cfg.output.shard_size):
        ids = tuple(t for t in plan.trajectory_ids if wanted is None or t in wanted)
        if ids:
            shard = ShardPlan(plan.shard_id, plan.trajectories_file, ids)
            jobs.extend(prepare_shard(out_dir, shard, scrub)[0])
    return jobs


async def evaluate_step(
    job: StepJob,
    specs: list[Spec],
    clients: Clients,
    settings: NapSettings,
    similarity: Similarity,
    cfg: PipelineConfig,
) -> list[EvalStepRecord]:
    """One row per compressor for this step; references are sampled once and shared."""
    try:
        references = await references_for(job, clients.agent, settings, similarity)
    except PermanentLLMError as exc:
        if exc.kind != "context_length":
            raise
        step = job.step
        log.warning("step %s/%d skipped: %s", step.trajectory_id, step.step_index, exc)
        return [base_record(s.name, job, None, settings, 0, CONTEXT_TOO_LONG) for s in specs]
    actions = [r.action for r in references if r.action is not None]

    async def one(spec: Spec) -> EvalStepRecord:
        candidate = await compress(
            spec,
            job,
            teacher=clients.teacher,
            endpoint=clients.extra.get(COMPRESSOR_ROLE),
            settings=settings,
            sampling=sampling_of(cfg),
        )
        try:
            return await judge_step(
                spec.name, job, candidate, actions, clients.agent, settings, similarity
            )
        except PermanentLLMError as exc:
            if exc.kind != "context_length":
                raise
            return base_record(spec.name, job, candidate, settings, len(actions), CONTEXT_TOO_LONG)

    return list(await asyncio.gather(*(one(s) for s in specs)))


async def evaluate_all(
    jobs: list[StepJob],
    specs: list[Spec],
    clients: Clients,
    settings: NapSettings,
    cfg: PipelineConfig,
) -> dict[str, list[EvalStepRecord]]:
    """Rows by compressor name, in step order; several steps in flight like the run."""
    similarity = get_similarity(settings.similarity)
    slots = asyncio.Semaphore(cfg.limits.steps_in_flight or 2 * cfg.limits.concurrency)
    done = 0
    every = max(1, min(25, len(jobs) // 10))

    async def step(job: StepJob) -> list[EvalStepRecord]:
        nonlocal done
        async with slots:
            rows = await evaluate_step(job, specs, clients, settings, similarity, cfg)
        done += 1
        if done % every == 0 or done == len(jobs):
            log.info("eval: %d/%d steps", done, len(jobs))
        return rows

    try:
        per_step = await asyncio.gather(*(step(j) for j in jobs))
    finally:
        await clients.aclose()
    by_spec: dict[str, list[EvalStepRecord]] = {s.name: [] for s in specs}
    for rows in per_step:
        for row in rows:
            by_spec[row.compressor].append(row)
    return by_spec


def _check_ingest(cfg: PipelineConfig, out_dir: Path) -> None:
    """Eval never discards a run's tables: OUT ingested from other inputs is an error."""
    marker = ingest_marker(out_dir)
    if marker.exists() and read_json(marker) != ingest_key(cfg):
        raise ConfigError(
            f"{out_dir} was ingested from other inputs or eligibility rules than this config's; "
            "eval would have to re-ingest and discard that run's tables. Evaluate into another "
            "folder (--set output.dir=...) or use the run's own config"
        )


def run_eval(
    cfg: PipelineConfig,
    compressors: list[str],
    *,
    split: str | None = None,
    dataset: Path | None = None,
    clients_factory: ClientFactory = build_clients,
) -> EvalResult:
    """Evaluate each compressor on the eligible steps and write OUT/eval/."""
    started = time.perf_counter()
    specs = parse_specs(compressors, cfg)  # fail on a bad SPEC before any work
    wanted = None
    if split is not None or dataset is not None:
        if split is None or dataset is None:
            raise ConfigError("--split and --dataset go together (e.g. --split test --dataset DIR)")
        wanted = split_trajectories(dataset, split)
        log.info("eval: %d trajectories in split %r of %s", len(wanted), split, dataset)
    out_dir = Path(cfg.output.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_ingest(cfg, out_dir)
    ensure_ingested(cfg, out_dir)
    jobs = eval_jobs(cfg, out_dir, wanted)
    log.info("eval: %d eligible steps, compressors %s", len(jobs), [s.name for s in specs])
    extra: dict[str, EndpointConfig] = {}
    if cfg.compressor is not None and any(s.kind == "endpoint" for s in specs):
        extra[COMPRESSOR_ROLE] = cfg.compressor
    clients = clients_factory(cfg, out_dir, extra)
    try:
        rows = asyncio.run(evaluate_all(jobs, specs, clients, nap_settings(cfg), cfg))
    finally:
        clients.close()
    result = EvalResult(out_dir)
    meta = {"split": split, "dataset": str(dataset) if dataset else None}
    result.reports, result.markdown, result.plot = write_outputs(
        out_dir / "eval", specs, rows, cfg, meta, usage=clients.usage.as_dict()
    )
    result.seconds = time.perf_counter() - started
    return result
