"""Likelihood NAP: judge candidates by how much they lower the references' log-probability.

Nothing is decoded. For a step, the agent model scores the tokens of each reference action once
given the raw context (one request, shared by all candidates) and once per candidate given the
context with the candidate in place; `builder.nap.gate.likelihood_delta` turns the two into one
score per reference, stored in `scores`, and its capped exponential is gated like a similarity.
Everything after the verdict (early exit, duplicates, selection, preferences, the control) is
the generate mode's, unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from builder.llm.scoring import Continuation, Scorer, ScoreRequest, TokenLogprob
from builder.nap.gate import likelihood_delta, likelihood_similarity, verdict
from builder.nap.judging import judge_waves
from builder.nap.types import NapSettings, StepJob
from builder.steps.replay import agent_context, context_end, tools_of
from schemas.candidates import CandidateRecord
from schemas.judgements import JudgementRecord
from schemas.references import ReferenceRecord


def logged_reply(job: StepJob) -> str | None:
    """The logged assistant turn that follows the step's observation."""
    messages = job.traj.messages
    end = context_end(list(messages), job.step.observation_message_index)
    if end < len(messages) and messages[end].role == "assistant":
        return messages[end].content
    return None


def continuation_of(job: StepJob, reference: ReferenceRecord) -> Continuation | None:
    """The reference as the assistant turn to score, with its action's span: the whole reply
    when it contains the command verbatim (text harnesses), else the command alone."""
    action = reference.action
    if action is None:
        return None
    command = action.command if action.command is not None else action.arguments
    reply = reference.reply if reference.mode == "sampled" else logged_reply(job)
    if reply and command and command in reply:
        start = reply.rindex(command)
        return Continuation(reply, (start, start + len(command)))
    return Continuation(command, (0, len(command)))


def _pairs(tokens: Sequence[TokenLogprob]) -> list[tuple[str, float]]:
    return [(t.text, t.logprob) for t in tokens]


async def likelihood_judge(
    job: StepJob,
    scorer: Scorer,
    order: Sequence[CandidateRecord],
    references: Sequence[ReferenceRecord],
    settings: NapSettings,
) -> tuple[list[JudgementRecord], int]:
    """Likelihood-mode judgement rows of `order` (shortest first, early exit) and requests."""
    continuations: list[Continuation] = []
    slot_of_reference: list[int] = []
    for reference in references:
        continuation = continuation_of(job, reference)
        if continuation is None:
            continue
        if continuation not in continuations:
            continuations.append(continuation)
        slot_of_reference.append(continuations.index(continuation))
    if not continuations or not order:
        return [], 0
    tools = tools_of(job.traj)
    raw_context = agent_context(job.traj, job.step, job.adapter, job.step.observation, job.prefix)
    raw = await scorer.score(ScoreRequest(tuple(raw_context), tools, tuple(continuations)))
    observation = job.step.observation
    elsewhere = "\n".join(
        m.content for i, m in enumerate(raw_context) if i != job.step.observation_message_index
    )
    name = f"likelihood:{settings.likelihood_score}"

    async def one(candidate: CandidateRecord, position: int) -> tuple[JudgementRecord, int]:
        context = agent_context(
            job.traj, job.step, job.adapter, candidate.rendered or "", job.prefix
        )
        scored = await scorer.score(ScoreRequest(tuple(context), tools, tuple(continuations)))
        deltas = [
            likelihood_delta(
                _pairs(scored.tokens[slot]),
                _pairs(raw.tokens[slot]),
                settings.likelihood_score,  # type: ignore[arg-type]
                observation,
                elsewhere,
            )
            for slot in slot_of_reference
        ]
        sims = [likelihood_similarity(d) for d in deltas]
        score, ok = verdict(sims, settings.likelihood_rule)
        row = JudgementRecord(
            job.step.trajectory_id,
            job.step.step_index,
            candidate.candidate_index,
            position,
            scorer.provider.model,
            None,
            None,
            False,
            1,
            sims,
            score,
            ok,
            name,
            gate_mode="likelihood",
            scores=deltas,
        )
        return row, 1

    rows, sent = await judge_waves(order, settings, one)
    return rows, sent + 1
