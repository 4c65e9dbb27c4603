"""`nap-builder plan`: what a run will send and cost, before paying for it.

It ingests (or reuses OUT's current ingest), applies eligibility and scrubbing as the run does,
and builds the real teacher and reference requests of every eligible step, so their prompt
tokens are cl100k counts of the very contexts a run sends. What depends on model answers
(how many candidates are judged, how long completions are) rests on stated assumptions
(`PlanAssumptions`). No model request is sent.
"""

from __future__ import annotations

import json
import math
import sqlite3
import tempfile
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from builder.config import PipelineConfig
from builder.control import REUSED
from builder.llm.batch.backend import BATCH_DISCOUNT
from builder.llm.cache import request_key
from builder.llm.factory import price_table
from builder.llm.protocol import ChatRequest
from builder.nap import StepJob, _agent_request, compressor_prompt
from builder.runner.run import ingest_into, ingest_is_current, nap_settings
from builder.runner.shard_work import ScrubSettings, prepare_shard
from builder.runner.shards import plan_shards
from builder.teacher.prompt import teacher_request
from builder.tokens import count_tokens
from schemas.trajectories import Message

MIN_CACHEABLE = 1024  # prompt tokens below which providers do not cache a prefix


@dataclass(frozen=True)
class PlanAssumptions:
    """What a plan cannot know without asking a model; each is printed with the plan."""

    unique_valid: float = 0.75  # fraction of teacher samples that are valid and distinct
    pass_rate: float = 0.5  # chance that a judged candidate passes the gate
    compression: float = 0.5  # judged observation tokens / raw observation tokens
    completion_fraction: float = 0.25  # completion tokens / max_tokens, per sample
    latency_s: float = 5.0  # seconds per request, for the time estimate


@dataclass
class StageEstimate:
    requests: float = 0.0  # logical requests (one per `complete` call)
    http_requests: float = 0.0
    prompt_tokens: float = 0.0  # billed prompt tokens, over every HTTP request
    cache_read_tokens: float = 0.0
    cache_write_tokens: float = 0.0
    completion_tokens_max: float = 0.0
    completion_tokens: float = 0.0  # expected, at `completion_fraction`
    cost_usd: float = 0.0

    def add(self, other: StageEstimate) -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)


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


def request_tokens(messages: list[Message] | tuple[Message, ...], tools: Any = None) -> int:
    """cl100k tokens of what a request carries: message texts, tool-call arguments, tools."""
    total = 0
    for m in messages:
        total += count_tokens(m.content or "")
        total += sum(count_tokens(c.arguments or "") for c in m.tool_calls or ())
    if tools:
        total += count_tokens(json.dumps(list(tools), ensure_ascii=False))
    return total


def expected_judged(unique: float, pass_rate: float, max_per_step: int, exhaustive: bool) -> float:
    """Expected judge requests of a step: waves of the passes still needed, shortest first,
    until `max_per_step` pass or the `unique` candidates run out (as `nap.judge`)."""
    if exhaustive:
        return unique
    low = math.floor(unique)
    frac = unique - low

    @cache
    def go(left: int, need: int) -> float:
        if left <= 0 or need <= 0:
            return 0.0
        width = min(need, left)
        expected = float(width)
        for passed in range(width + 1):
            chance = (
                math.comb(width, passed) * pass_rate**passed * (1 - pass_rate) ** (width - passed)
            )
            expected += chance * go(left - width, need - passed)
        return expected

    return (1 - frac) * go(low, max_per_step) + frac * go(low + 1, max_per_step)


def _bill(stage: StageEstimate, prompt: int, shared: int, sends: int, provider: str) -> None:
    """Prompt tokens of `sends` HTTP requests with `shared` leading tokens in common: the
    first pays them in full (Anthropic: a cache write), the others read them from the cache
    when the prefix is long enough to be cached."""
    stage.prompt_tokens += prompt * sends
    if shared < MIN_CACHEABLE or sends <= 1:
        return
    stage.cache_read_tokens += shared * (sends - 1)
    if provider == "anthropic":
        stage.cache_write_tokens += shared


class Dedup:
    """Identical requests are sent once per run and never again once cached: keys seen in
    this plan, or found in the run's request cache, cost nothing."""

    def __init__(self, cfg: PipelineConfig) -> None:
        self.cfg = cfg
        self.seen: set[str] = set()
        self.cached = 0
        self._db: sqlite3.Connection | None = None
        path = cfg.cache_dir() / "requests.sqlite"
        if cfg.cache.enabled and path.exists():
            self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def is_new(self, role: str, request: ChatRequest) -> bool:
        endpoint = self.cfg.teacher if role == "teacher" else self.cfg.agent
        provider = "openai" if endpoint.provider == "local-server" else endpoint.provider
        key = request_key(provider, endpoint.primary_url, endpoint.model, request)
        if key in self.seen:
            return False
        self.seen.add(key)
        if self._db is not None:
            query = "SELECT 1 FROM responses WHERE key = ?"
            if self._db.execute(query, (key,)).fetchone() is not None:
                self.cached += 1
                return False
        return True


def _step_estimates(
    job: StepJob, cfg: PipelineConfig, a: PlanAssumptions, dedup: Dedup
) -> dict[str, StageEstimate]:
    settings = nap_settings(cfg)
    out: dict[str, StageEstimate] = {}
    teacher_n = settings.teacher_samples
    system, user = compressor_prompt(job)
    request = teacher_request(
        system,
        user,
        n=teacher_n,
        temperature=settings.teacher_temperature,
        max_tokens=settings.teacher_max_tokens,
        seed=settings.seed,
        structured=settings.teacher_structured,
    )
    reference = _agent_request(
        job,
        None,
        n=settings.reference_samples,
        temperature=settings.reference_temperature,
        seed=settings.seed,
        settings=settings,
    )
    new_teacher = teacher_n > 0 and dedup.is_new("teacher", request)
    sampled = settings.reference_mode == "sampled"
    new_reference = sampled and dedup.is_new("agent", reference)
    if not new_teacher and sampled and not new_reference:
        return out  # same candidates and contexts as an earlier step: every answer is cached
    if new_teacher:
        tokens = request_tokens(request.messages)
        fan_out = cfg.teacher.provider == "anthropic"
        t = out.setdefault("teacher", StageEstimate())
        t.requests += 1
        t.http_requests += teacher_n if fan_out else 1
        _bill(t, tokens, tokens, teacher_n if fan_out else 1, cfg.teacher.provider)
        t.completion_tokens_max += teacher_n * settings.teacher_max_tokens
    fan_agent = cfg.agent.provider == "anthropic"
    tokens = request_tokens(reference.messages, reference.tools)
    prefix = request_tokens(reference.messages[: reference.cache_prefix or 0], reference.tools)
    observation = count_tokens(job.step.observation)
    agent_sends = 0.0
    if new_reference:
        r = out.setdefault("references", StageEstimate())
        r.requests += 1
        samples = settings.reference_samples if fan_agent else 1
        r.http_requests += samples
        r.prompt_tokens += tokens * samples
        r.completion_tokens_max += settings.reference_samples * settings.agent_max_tokens
        agent_sends += samples
    unique = teacher_n * a.unique_valid + len(cfg.teacher.rules)
    judged = expected_judged(unique, a.pass_rate, settings.max_per_step, settings.exhaustive)
    j = out.setdefault("judgements", StageEstimate())
    j.requests += judged
    j.http_requests += judged
    judge_prompt = tokens - observation + observation * a.compression
    j.prompt_tokens += judge_prompt * judged
    j.completion_tokens_max += judged * settings.agent_max_tokens
    if settings.control_mode != REUSED:  # the raw observation judged as the control
        j.requests += 1
        j.http_requests += 1
        j.prompt_tokens += tokens
        j.completion_tokens_max += settings.agent_max_tokens
        judged += 1
    # the agent requests of a step share their prefix: the first pays it, the rest read it
    sends = agent_sends + judged
    if prefix >= MIN_CACHEABLE and sends > 1:
        first = out.get("references", j)
        if cfg.agent.provider == "anthropic":
            first.cache_write_tokens += prefix
        reads = prefix * (sends - 1)
        share = judged / sends
        j.cache_read_tokens += reads * share
        if "references" in out:
            out["references"].cache_read_tokens += reads * (1 - share)
    for stage in out.values():
        stage.completion_tokens = stage.completion_tokens_max * a.completion_fraction
    return out


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
    scrub = ScrubSettings(cfg.scrub.enabled, cfg.scrub.emails)
    jobs: list[StepJob] = []
    trajectories = 0
    for shard in plan_shards(ingest_dir, cfg.output.shard_size):
        trajectories += len(shard.trajectory_ids)
        jobs += prepare_shard(ingest_dir, shard, scrub)[0]
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
        for name, estimate in _step_estimates(job, cfg, a, dedup).items():
            plan.stages.setdefault(name, StageEstimate()).add(estimate)
    plan.cached_requests = dedup.cached
    _price(plan, cfg)
    for stage in plan.stages.values():
        plan.total.add(stage)
    _timing(plan, cfg, a)
    return plan
