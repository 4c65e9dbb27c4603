"""`nap-builder eval`: every eligible step (of the inputs, or of a published split) compressed by
each compressor and judged by the configured gate; tables and reports under OUT/eval/.

Ingest, scrubbing, clients (cache, limits, budget) and the gate are the run's own, so the
figures are comparable with the run's and requests the run already made cost nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.config import EndpointConfig, PipelineConfig
from builder.errors import ConfigError, PermanentLLMError
from builder.evaluate.compressors import Spec, parse_specs
from builder.evaluate.eval_report import write_outputs
from builder.evaluate.own_prefixes import (
    OWN,
    RAW,
    Key,
    PrefixTokens,
    compress_all,
    marked,
    own_jobs,
    prefix_modes,
)
from builder.evaluate.split import split_trajectories
from builder.evaluate.step_verdict import base_record, judge_step
from builder.llm.factory import COMPRESSOR_ROLE, Clients, build_clients
from builder.nap.from_config import nap_settings, sampling_of
from builder.nap.situated import situated_similarity
from builder.nap.step import NapSettings, Similarity, StepJob, references_for
from builder.run.ingest_state import ensure_ingested, ingest_key, ingest_marker
from builder.run.shard_work import ScrubSettings, prepare_shard
from builder.run.shards import ShardPlan, plan_shards, read_json
from builder.similarity.compare import get_similarity
from schemas.candidates import CandidateRecord
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
            own = r.get("own_prefixes")
            if own and own.get("preservation_rate") is not None:
                lines.append(
                    f"{name} on its own compressed prefixes: {own['preserved']}/{own['steps']} "
                    f"preserved ({own['preservation_rate']:.0%})"
                )
        lines.append(f"wrote {self.markdown} ({self.seconds:.1f}s)")
        return "\n".join(lines)


def eval_jobs(cfg: PipelineConfig, out_dir: Path, wanted: set[str] | None) -> list[StepJob]:
    """Eligible steps of the ingested trajectories (only `wanted` ones when given), scrubbed
    as the run scrubs them before any model sees them."""
    scrub = ScrubSettings.of(cfg.scrub)
    jobs: list[StepJob] = []
    for plan in plan_shards(out_dir, cfg.output.shard_size):
        ids = tuple(t for t in plan.trajectory_ids if wanted is None or t in wanted)
        if ids:
            shard = ShardPlan(plan.shard_id, plan.trajectories_file, ids)
            jobs.extend(prepare_shard(out_dir, shard, scrub)[0])
    return jobs


async def evaluate_step(
    job: StepJob,
    specs: Sequence[Spec],
    candidates: Mapping[Key, CandidateRecord | None],
    clients: Clients,
    settings: NapSettings,
    similarity: Similarity,
) -> list[EvalStepRecord]:
    """One row per compressor for this step (in `job`'s context); references are sampled once
    and shared."""
    step = job.step
    mine = [candidates[(s.name, step.trajectory_id, step.step_index)] for s in specs]
    similarity = situated_similarity(similarity, job)
    try:
        references = await references_for(job, clients.agent, settings, similarity)
    except PermanentLLMError as exc:
        if exc.kind != "context_length":
            raise
        log.warning("step %s/%d skipped: %s", step.trajectory_id, step.step_index, exc)
        return [
            base_record(s.name, job, c, settings, 0, CONTEXT_TOO_LONG)
            for s, c in zip(specs, mine, strict=True)
        ]
    actions = [r.action for r in references if r.action is not None]

    async def one(spec: Spec, candidate: CandidateRecord | None) -> EvalStepRecord:
        try:
            return await judge_step(
                spec.name, job, candidate, actions, clients.agent, settings, similarity
            )
        except PermanentLLMError as exc:
            if exc.kind != "context_length":
                raise
            return base_record(spec.name, job, candidate, settings, len(actions), CONTEXT_TOO_LONG)

    return list(await asyncio.gather(*(one(s, c) for s, c in zip(specs, mine, strict=True))))


async def evaluate_all(
    jobs: list[StepJob],
    specs: list[Spec],
    clients: Clients,
    settings: NapSettings,
    cfg: PipelineConfig,
    modes: tuple[str, ...] = (RAW,),
) -> dict[str, list[EvalStepRecord]]:
    """Rows by compressor name, in step order (raw prefixes, then own); several steps in
    flight like the run."""
    similarity = get_similarity(settings.similarity)
    slots = asyncio.Semaphore(cfg.limits.steps_in_flight or 2 * cfg.limits.concurrency)
    work: list[tuple[StepJob, list[Spec], str, PrefixTokens]] = []
    if RAW in modes:
        work += [(job, specs, RAW, PrefixTokens()) for job in jobs]
    done = 0
    every = 1

    async def step(item: tuple[StepJob, list[Spec], str, PrefixTokens]) -> list[EvalStepRecord]:
        nonlocal done
        job, wanted, mode, tokens = item
        async with slots:
            rows = await evaluate_step(job, wanted, candidates, clients, settings, similarity)
        done += 1
        if done % every == 0 or done == len(work):
            log.info("eval: %d/%d steps", done, len(work))
        return marked(rows, mode, tokens)

    try:
        endpoint = clients.extra.get(COMPRESSOR_ROLE)
        candidates = await compress_all(
            jobs, specs, clients.teacher, endpoint, settings, sampling_of(cfg)
        )
        if OWN in modes:
            for spec in specs:
                own = own_jobs(jobs, spec, candidates, settings)
                work += [(job, [spec], OWN, tokens) for job, tokens in own]
        every = max(1, min(25, len(work) // 10))
        per_step = await asyncio.gather(*(step(item) for item in work))
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
    prefixes: str = RAW,
    clients_factory: ClientFactory = build_clients,
) -> EvalResult:
    """Evaluate each compressor on the eligible steps and write OUT/eval/; `prefixes` is
    `raw`, `own` or `both` (`builder.evaluate.own_prefixes`)."""
    started = time.perf_counter()
    specs = parse_specs(compressors, cfg)  # fail on a bad SPEC before any work
    modes = prefix_modes(prefixes)
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
        rows = asyncio.run(evaluate_all(jobs, specs, clients, nap_settings(cfg), cfg, modes))
    finally:
        clients.close()
    result = EvalResult(out_dir)
    meta = {"split": split, "dataset": str(dataset) if dataset else None, "prefixes": list(modes)}
    result.reports, result.markdown, result.plot = write_outputs(
        out_dir / "eval", specs, rows, cfg, meta, usage=clients.usage.as_dict()
    )
    result.seconds = time.perf_counter() - started
    return result
