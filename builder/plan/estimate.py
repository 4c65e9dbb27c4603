"""`nap-builder plan`: what a run will send and cost, before paying for it.

It ingests (or reuses OUT's current ingest), applies eligibility and scrubbing as the run does,
and builds the real teacher and reference requests of every eligible step, so their prompt
tokens are cl100k counts of the very contexts a run sends. What depends on model answers
(how many candidates are judged, how long completions are) rests on stated assumptions
(`PlanAssumptions`). No model request is sent.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from builder.config import PipelineConfig
from builder.llm.batch.backend import BATCH_DISCOUNT
from builder.llm.factory import price_table
from builder.nap.prefix import deployed
from builder.nap.step import StepJob
from builder.plan.step_estimate import (
    MIN_CACHEABLE,
    Dedup,
    PlanAssumptions,
    StageEstimate,
    step_estimates,
)
from builder.run.ingest_state import ingest_into, ingest_is_current
from builder.run.shard_work import ScrubSettings, prepare_shard
from builder.run.shards import plan_shards

__all__ = ["MIN_CACHEABLE", "Plan", "PlanAssumptions", "StageEstimate", "make_plan"]


@dataclass
class Plan:
    eligible_steps: int = 0
    trajectories: int = 0
    stages: dict[str, StageEstimate] = field(default_factory=dict)
    total: StageEstimate = field(default_factory=StageEstimate)
    seconds_by_limit: dict[str, float] = field(default_factory=dict)
    assumptions: dict[str, Any] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)
    cached_requests: int = 0  # teacher / reference requests already in the request cache

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = max(self.seconds_by_limit.values(), default=0.0)
        return data


def _price(plan: Plan, cfg: PipelineConfig) -> None:
    prices = price_table(cfg)
    for name, stage in plan.stages.items():
        model = cfg.teacher.model if name == "teacher" else cfg.agent.model
        price = prices.get(model)
        if price is None:
            plan.unpriced.append(model)
            continue
        fresh = stage.prompt_tokens - stage.cache_read_tokens - stage.cache_write_tokens
        read = price.input if price.cached_input is None else price.cached_input
        write = 1.25 * price.input if price.cache_write is None else price.cache_write
        stage.cost_usd = (
            max(fresh, 0.0) * price.input
            + stage.cache_read_tokens * read
            + stage.cache_write_tokens * write
            + stage.completion_tokens * price.output
        ) / 1e6
        endpoint = cfg.teacher if name == "teacher" else cfg.agent
        if endpoint.batch:
            stage.cost_usd *= BATCH_DISCOUNT


def _timing(plan: Plan, cfg: PipelineConfig, a: PlanAssumptions) -> None:
    limits, total = cfg.limits, plan.total
    plan.seconds_by_limit["concurrency"] = total.http_requests * a.latency_s / limits.concurrency
    if limits.requests_per_minute:
        plan.seconds_by_limit["requests_per_minute"] = (
            60 * total.http_requests / limits.requests_per_minute
        )
    if limits.tokens_per_minute:
        tokens = total.prompt_tokens + total.completion_tokens
        plan.seconds_by_limit["tokens_per_minute"] = 60 * tokens / limits.tokens_per_minute


def _jobs(cfg: PipelineConfig, ingest_dir: Path) -> tuple[list[StepJob], int]:
    scrub = ScrubSettings.of(cfg.scrub)
    jobs: list[StepJob] = []
    trajectories = 0
    for shard in plan_shards(ingest_dir, cfg.output.shard_size):
        trajectories += len(shard.trajectory_ids)
        jobs += prepare_shard(ingest_dir, shard, scrub)[0]
    if cfg.replay.prefix == "deployed":  # only the steps the deployed compressor changed
        jobs = [deployed(j) for j in jobs if j.step.deployed_changed]
    return jobs, trajectories


def make_plan(cfg: PipelineConfig, assumptions: PlanAssumptions | None = None) -> Plan:
    """The plan of `cfg`: OUT's ingest when current, else a throwaway one (OUT untouched)."""
    a = assumptions or PlanAssumptions()
    out_dir = cfg.local_output_dir()  # an object store's mirror, as left by its last run
    if ingest_is_current(cfg, out_dir):
        jobs, trajectories = _jobs(cfg, out_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="nap-plan-") as tmp:
            ingest_into(cfg, Path(tmp))
            jobs, trajectories = _jobs(cfg, Path(tmp))
    plan = Plan(len(jobs), trajectories, assumptions=asdict(a))
    dedup = Dedup(cfg)
    for job in jobs:
        for name, estimate in step_estimates(job, cfg, a, dedup).items():
            plan.stages.setdefault(name, StageEstimate()).add(estimate)
    plan.cached_requests = dedup.cached
    _price(plan, cfg)
    for stage in plan.stages.values():
        plan.total.add(stage)
    _timing(plan, cfg, a)
    return plan
