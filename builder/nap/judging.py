"""Generate-mode judging: the agent re-asked with each candidate in place, shortest first in
waves (early exit), and the step's control (the raw observation judged the same way)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from builder.llm.settled import gather_settled
from builder.nap.agent import sample_actions
from builder.nap.control import REUSED, control_row, reused_control_input
from builder.nap.gate import verdict
from builder.nap.types import Completer, JudgeOne, NapSettings, Similarity, StepJob
from schemas.candidates import CandidateRecord
from schemas.judgements import CONTROL_INDEX, JudgementRecord
from schemas.references import ReferenceRecord
from schemas.steps import Action


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
    score, ok = verdict(sims, settings.gate_rule)
    ok = ok and action is not None
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


def leave_one_out(settings: NapSettings) -> NapSettings:
    """The gate for a reference sample judged against the other samples: one reference
    fewer, so the counts of `agree` are those of n - 1 samples (explicit ones capped)."""
    n = settings.reference_samples - 1

    def capped(value: int | None) -> int | None:
        return None if value is None else min(value, n)

    return replace(
        settings,
        reference_samples=n,
        min_agree=capped(settings.min_agree),
        min_references=capped(settings.min_references),
    )


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
            leave_one_out(settings),
            similarity,
        )
        return control_row(row), 0
    actions = [r.action for r in references if r.action is not None]
    row, sent = await generate_verdict(
        job, agent, job.step.observation, index, actions, settings, similarity
    )
    return control_row(row), sent
