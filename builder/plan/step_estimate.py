"""The estimate of one eligible step for `nap-builder plan`: the real teacher and reference
requests, counted in cl100k tokens, and what judging them will send under the stated
`PlanAssumptions` (generate or likelihood gate)."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from builder.config import PipelineConfig
from builder.llm.cache import request_key
from builder.llm.protocol import ChatRequest
from builder.nap.control import REUSED
from builder.nap.from_config import nap_settings
from builder.nap.step import NapSettings, StepJob, agent_request, step_teacher_request
from builder.steps.tokens import count_tokens
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


def step_estimates(
    job: StepJob, cfg: PipelineConfig, a: PlanAssumptions, dedup: Dedup
) -> dict[str, StageEstimate]:
    settings = nap_settings(cfg)
    out: dict[str, StageEstimate] = {}
    teacher_n = settings.teacher_samples
    request = step_teacher_request(job, settings)
    reference = agent_request(
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
    judge_prompt = tokens - observation + observation * a.compression
    if cfg.gate.mode == "likelihood":
        _expect_completions(out, a)
        vllm = cfg.agent.provider != "local" and cfg.gate.likelihood_api == "vllm"
        _likelihood_estimate(out, tokens, judge_prompt, judged, settings, a, vllm)
        return out
    j = out.setdefault("judgements", StageEstimate())
    j.requests += judged
    j.http_requests += judged
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
    return _expect_completions(out, a)


def _expect_completions(
    out: dict[str, StageEstimate], a: PlanAssumptions
) -> dict[str, StageEstimate]:
    for stage in out.values():
        stage.completion_tokens = stage.completion_tokens_max * a.completion_fraction
    return out


def _likelihood_estimate(
    out: dict[str, StageEstimate],
    tokens: int,
    judge_prompt: float,
    judged: float,
    settings: NapSettings,
    a: PlanAssumptions,
    vllm: bool,
) -> None:
    """Likelihood judging (`nap.likelihood_judging`): one scoring of the raw context, then one
    per judged candidate; each scores every reference reply after the whole context and
    decodes one token per reply (on vLLM, after a /tokenize call for the context and one per
    reply). Replies are assumed distinct: identical ones are scored once, so the real prompt
    tokens and calls can be lower (half the tokens, when both samples agree)."""
    replies = settings.reference_samples if settings.reference_mode == "sampled" else 1
    reply = settings.agent_max_tokens * a.completion_fraction
    s = out.setdefault("likelihood", StageEstimate())
    s.requests += judged + 1
    s.http_requests += (judged + 1) * (replies + 2 if vllm else 1)
    s.prompt_tokens += replies * ((tokens + reply) + (judge_prompt + reply) * judged)
    s.completion_tokens_max += replies * (judged + 1)
    s.completion_tokens = s.completion_tokens_max  # exactly one decoded token per reply
