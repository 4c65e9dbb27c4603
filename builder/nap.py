"""Next-action preservation for one step: candidates, references, judgements, selection.

The LLM calls live here and nowhere else in the NAP core; prompt building, parsing, similarity,
the gate and selection are pure functions in their own modules. All agent requests of a step
share the context prefix and are issued back to back, so prefix caches hit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from builder.agent_actions import parse_reply, without_focus
from builder.aio import gather_settled
from builder.control import REUSED, control_mode, control_row, reused_control_input
from builder.formats.base import FormatAdapter
from builder.gate import Aggregate, aggregate, passes
from builder.llm.likelihood import Scorer
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse
from builder.replay import agent_context, shared_prefix_length, tools_of
from builder.select import judge_order, preference_pairs, select
from builder.teacher.candidates import build_candidates
from builder.teacher.prompt import PROMPT_VERSION, build_prompt, teacher_request
from schemas.candidates import CandidateRecord
from schemas.judgements import CONTROL_INDEX, JudgementRecord
from schemas.preferences import PreferenceRecord
from schemas.references import ReferenceRecord
from schemas.steps import Action, StepRecord
from schemas.supervision import SupervisionRecord
from schemas.trajectories import TrajectoryRecord

Similarity = Callable[[Action, Action], float]
JudgeOne = Callable[[CandidateRecord, int], Awaitable[tuple[JudgementRecord, int]]]


class Completer(Protocol):
    """What NAP needs from an LLM client (`LLMClient` satisfies it)."""

    provider: ChatProvider

    async def complete(self, request: ChatRequest, *, stage: str) -> ChatResponse: ...


@dataclass(frozen=True)
class NapSettings:
    """Every NAP choice, with the reference pipeline's values as defaults (DESIGN.md §1)."""

    teacher_samples: int = 8
    teacher_temperature: float = 1.0
    teacher_max_tokens: int = 1024
    teacher_structured: bool = True
    rules: tuple[str, ...] = ()
    reference_mode: str = "sampled"  # sampled | logged
    reference_samples: int = 8
    reference_temperature: float = 0.7
    agent_temperature: float = 0.0
    agent_max_tokens: int = 512
    format_retries: int = 2
    similarity: str = "semantic"
    aggregate: Aggregate = "mean_top_k"
    top_k: int = 3
    threshold: float = 0.65
    max_per_step: int = 4
    fallback: str = "drop"  # drop | unchanged
    exhaustive: bool = False
    max_preference_pairs: int | None = 4  # None: every passing x failing pair
    seed: int = 0
    gate_mode: str = "generate"  # generate | likelihood
    likelihood_score: str = "mean"  # mean | sum | grounded
    likelihood_threshold: float = 0.5
    control: str = "auto"  # auto | judged
    control_floor: float = 0.5

    @property
    def control_mode(self) -> str:
        """How this run's control is obtained (`builder.control.control_mode`)."""
        return control_mode(
            self.control,
            self.reference_mode,
            self.reference_samples,
            self.reference_temperature,
            self.agent_temperature,
        )


@dataclass
class StepResult:
    candidates: list[CandidateRecord] = field(default_factory=list)
    references: list[ReferenceRecord] = field(default_factory=list)
    judgements: list[JudgementRecord] = field(default_factory=list)
    supervision: list[SupervisionRecord] = field(default_factory=list)
    preferences: list[PreferenceRecord] = field(default_factory=list)
    dropped: str | None = None  # why the step produced no supervision
    agent_requests: int = 0  # references, judgements and the control
    control_requests: int = 0
    judge_requests: int = 0
    judge_requests_exhaustive: int = 0  # judging every unique valid candidate once


@dataclass(frozen=True)
class StepJob:
    traj: TrajectoryRecord
    step: StepRecord
    adapter: FormatAdapter


def _command_text(action: Action | None) -> str:
    if action is None:
        return ""
    return action.command if action.command is not None else f"{action.tool} {action.arguments}"


def compressor_prompt(job: StepJob) -> tuple[str, str]:
    """(system, user) prompt of the compressor for this step's observation."""
    return build_prompt(
        job.traj.task or "",
        job.step.focus_question,
        _command_text(job.step.action),
        job.step.observation,
    )


async def teacher_candidates(
    job: StepJob, teacher: Completer, settings: NapSettings
) -> list[CandidateRecord]:
    system, user = compressor_prompt(job)
    replies: list[str] = []
    if settings.teacher_samples > 0:
        request = teacher_request(
            system,
            user,
            n=settings.teacher_samples,
            temperature=settings.teacher_temperature,
            max_tokens=settings.teacher_max_tokens,
            seed=settings.seed,
            structured=settings.teacher_structured,
        )
        response = await teacher.complete(request, stage="teacher")
        replies = [c.text for c in response.completions]
    return build_candidates(
        job.step,
        replies,
        settings.rules,
        teacher_model=teacher.provider.model,
        prompt_version=PROMPT_VERSION,
    )


def _agent_request(
    job: StepJob,
    rendered: str | None,
    *,
    n: int,
    temperature: float,
    seed: int,
    settings: NapSettings,
) -> ChatRequest:
    return ChatRequest(
        messages=tuple(agent_context(job.traj, job.step, job.adapter, rendered)),
        tools=tools_of(job.traj),
        n=n,
        temperature=temperature,
        max_tokens=settings.agent_max_tokens,
        seed=seed,
        cache_prefix=shared_prefix_length(job.step),
    )


async def sample_actions(
    job: StepJob,
    agent: Completer,
    rendered: str | None,
    *,
    n: int,
    temperature: float,
    stage: str,
    settings: NapSettings,
) -> list[tuple[str | None, Action | None, int]]:
    """n agent replies with their parsed actions; format errors are re-asked (new seed,
    temperature ≥ 0.3 since a greedy retry would repeat itself) up to `format_retries` times."""
    results: list[tuple[str | None, Action | None, int]] = [(None, None, 0)] * n
    missing = list(range(n))
    for attempt in range(settings.format_retries + 1):
        if not missing:
            break
        temp = temperature if attempt == 0 else max(temperature, 0.3)
        request = _agent_request(
            job,
            rendered,
            n=len(missing),
            temperature=temp,
            seed=settings.seed + 1000 * attempt,
            settings=settings,
        )
        response = await agent.complete(request, stage=stage)
        still = []
        for slot, completion in zip(missing, response.completions, strict=True):
            action = parse_reply(job.adapter, completion)
            results[slot] = (completion.text, action, attempt + 1)
            if action is None:
                still.append(slot)
        missing = still
    return results


async def references_for(
    job: StepJob, agent: Completer, settings: NapSettings, similarity: Similarity
) -> list[ReferenceRecord]:
    logged = without_focus(job.step.next_action) if job.step.next_action else None
    base = (job.step.trajectory_id, job.step.step_index)
    if settings.reference_mode == "logged":
        return [
            ReferenceRecord(
                *base, 0, "logged", None, None, logged, logged is None, 0, 1.0 if logged else None
            )
        ]
    sampled = await sample_actions(
        job,
        agent,
        None,
        n=settings.reference_samples,
        temperature=settings.reference_temperature,
        stage="references",
        settings=settings,
    )
    return [
        ReferenceRecord(
            *base,
            i,
            "sampled",
            agent.provider.model,
            reply,
            action,
            action is None,
            attempts,
            similarity(action, logged) if action is not None and logged is not None else None,
        )
        for i, (reply, action, attempts) in enumerate(sampled)
    ]


async def judge_waves(
    order: Sequence[CandidateRecord], settings: NapSettings, judge_one: JudgeOne
) -> tuple[list[JudgementRecord], int]:
    """Judge candidates shortest-first in waves of the passes still needed, stopping once
    `max_per_step` have passed (all of them when `exhaustive`). Returns rows and requests sent."""
    rows: list[JudgementRecord] = []
    requests = 0
    position = 0
    passed = 0
    while position < len(order) and (settings.exhaustive or passed < settings.max_per_step):
        width = len(order) - position if settings.exhaustive else settings.max_per_step - passed
        wave = order[position : position + width]
        outcomes = await gather_settled(
            *(judge_one(c, position + offset) for offset, c in enumerate(wave))
        )
        for row, sent in outcomes:
            rows.append(row)
            requests += sent
            passed += row.passed
        position += len(wave)
    return rows, requests


async def generate_verdict(
    job: StepJob,
    agent: Completer,
    rendered: str,
    index: tuple[int, int],
    references: Sequence[Action],
    settings: NapSettings,
    similarity: Similarity,
) -> tuple[JudgementRecord, int]:
    """The agent's action with `rendered` in place, gated against the references.
    `index` is (candidate_index, judge_order)."""
    [(reply, action, attempts)] = await sample_actions(
        job,
        agent,
        rendered,
        n=1,
        temperature=settings.agent_temperature,
        stage="judgements",
        settings=settings,
    )
    return _verdict(
        job, index, agent.provider.model, reply, action, attempts, references, settings, similarity
    ), attempts


def _verdict(
    job: StepJob,
    index: tuple[int, int],
    model: str | None,
    reply: str | None,
    action: Action | None,
    attempts: int,
    references: Sequence[Action],
    settings: NapSettings,
    similarity: Similarity,
) -> JudgementRecord:
    sims = [similarity(action, ref) for ref in references] if action is not None else []
    score = aggregate(sims, settings.aggregate, settings.top_k)
    ok = action is not None and passes(score, settings.threshold)
    return JudgementRecord(
        job.step.trajectory_id,
        job.step.step_index,
        index[0],
        index[1],
        model,
        reply,
        action,
        action is None,
        attempts,
        sims,
        score,
        ok,
        settings.similarity,
    )


async def judge(
    job: StepJob,
    agent: Completer,
    order: Sequence[CandidateRecord],
    references: Sequence[Action],
    settings: NapSettings,
    similarity: Similarity,
) -> tuple[list[JudgementRecord], int]:
    """Generate-mode judging of `order` (see `judge_waves`)."""

    async def one(candidate: CandidateRecord, position: int) -> tuple[JudgementRecord, int]:
        rendered = candidate.rendered or ""
        index = (candidate.candidate_index, position)
        return await generate_verdict(job, agent, rendered, index, references, settings, similarity)

    return await judge_waves(order, settings, one)


async def control_for(
    job: StepJob,
    agent: Completer,
    references: Sequence[ReferenceRecord],
    settings: NapSettings,
    similarity: Similarity,
) -> tuple[JudgementRecord | None, int]:
    """The step's control row (the raw observation judged as `unchanged`) and requests sent."""
    index = (CONTROL_INDEX, CONTROL_INDEX)
    if settings.control_mode == REUSED:
        reused = reused_control_input(references)
        if reused is None:
            return None, 0
        sample, others = reused
        row = _verdict(
            job,
            index,
            sample.agent_model,
            sample.reply,
            sample.action,
            0,
            others,
            settings,
            similarity,
        )
        return control_row(row), 0
    actions = [r.action for r in references if r.action is not None]
    row, sent = await generate_verdict(
        job, agent, job.step.observation, index, actions, settings, similarity
    )
    return control_row(row), sent


async def process_step(
    job: StepJob,
    teacher: Completer,
    agent: Completer,
    settings: NapSettings,
    similarity: Similarity,
    scorer: Scorer | None = None,
) -> StepResult:
    """Everything NAP does for one eligible step; tables rows come back, nothing is written.
    `scorer` gives prompt log-probabilities; only `gate_mode="likelihood"` needs it."""
    candidates, references = await gather_settled(
        teacher_candidates(job, teacher, settings),
        references_for(job, agent, settings, similarity),
    )
    result = StepResult(candidates=candidates, references=references)
    result.agent_requests = sum(r.attempts for r in references if r.mode == "sampled")
    actions = [r.action for r in references if r.action is not None]
    order = judge_order(candidates)
    result.judge_requests_exhaustive = len(order) if actions else 0
    if not actions:
        result.dropped = "no_reference_action"
    else:
        if settings.gate_mode == "likelihood":
            from builder.nap_likelihood import likelihood_judge  # it builds on this module

            if scorer is None:
                raise ValueError("gate_mode 'likelihood' needs a scorer (prompt log-probabilities)")
            judged = likelihood_judge(job, scorer, order, references, settings)
        else:
            judged = judge(job, agent, order, actions, settings, similarity)
        (result.judgements, sent), (control, control_sent) = await gather_settled(
            judged, control_for(job, agent, references, settings, similarity)
        )
        result.judge_requests = sent
        result.control_requests = control_sent
        result.agent_requests += sent + control_sent
        if control is not None:
            result.judgements.append(control)
    system, prompt = compressor_prompt(job)
    selection = select(
        job.step,
        candidates,
        result.judgements,
        system=system,
        prompt=prompt,
        prompt_version=PROMPT_VERSION,
        max_per_step=settings.max_per_step,
        fallback=settings.fallback,  # type: ignore[arg-type]
        agent_model=agent.provider.model,
        has_reference_action=bool(actions),
    )
    result.supervision = list(selection.rows)
    if not result.supervision:
        result.dropped = result.dropped or selection.drop_reason
    result.preferences = preference_pairs(
        job.step,
        candidates,
        result.judgements,
        system=system,
        prompt=prompt,
        prompt_version=PROMPT_VERSION,
        max_pairs=settings.max_preference_pairs,
    )
    return result
