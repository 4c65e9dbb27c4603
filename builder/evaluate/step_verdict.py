"""One step under one compressor: what the agent saw, and the configured gate's verdict.

The references and the gate are the NAP core's (`builder.nap.agent.references_for`,
`builder.nap.judging.judge`) with the run's settings, so a candidate the run judged is judged by
the same request here and the cache answers it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from builder.evaluate.intents import action_intent, command_text
from builder.nap.step import Completer, NapSettings, Similarity, StepJob, judge
from builder.steps.tokens import count_tokens
from schemas.candidates import CandidateRecord
from schemas.eval_steps import EvalStepRecord
from schemas.steps import Action

NO_REFERENCE = "no_reference_action"
TOO_FEW = "too_few_references"  # the `agree` gate cannot judge (builder.nap.step)
NO_REPLY = "no_reply"


def seen_by_agent(job: StepJob, candidate: CandidateRecord | None) -> tuple[str, int, bool]:
    """(text the agent sees, its tokens, fell back to raw): an invalid output leaves the raw
    observation, as a deployed compressor that fails would."""
    if candidate is not None and candidate.valid and candidate.rendered is not None:
        tokens = candidate.rendered_tokens
        return (
            candidate.rendered,
            tokens if tokens is not None else count_tokens(candidate.rendered),
            False,
        )
    raw = job.step.observation
    raw_tokens = candidate.raw_tokens if candidate and candidate.raw_tokens is not None else None
    return raw, raw_tokens if raw_tokens is not None else count_tokens(raw), True


def base_record(
    name: str,
    job: StepJob,
    candidate: CandidateRecord | None,
    settings: NapSettings,
    references: int,
    skip_reason: str | None,
) -> EvalStepRecord:
    """The row before judging: the compression and its sizes."""
    step = job.step
    rendered, tokens, fell_back = seen_by_agent(job, candidate)
    raw_tokens = candidate.raw_tokens if candidate and candidate.raw_tokens is not None else None
    return EvalStepRecord(
        compressor=name,
        trajectory_id=step.trajectory_id,
        step_index=step.step_index,
        intent=action_intent(step.action),
        command=command_text(step.action),
        evaluated=skip_reason is None,
        skip_reason=skip_reason,
        reply=candidate.reply if candidate else None,
        kind=candidate.kind if candidate else None,
        output=candidate.output if candidate else None,
        valid=bool(candidate and candidate.valid),
        invalid_reason=candidate.invalid_reason if candidate else NO_REPLY,
        fell_back_to_raw=fell_back,
        rendered=rendered,
        raw_chars=len(step.observation),
        compressed_chars=len(rendered),
        raw_tokens=raw_tokens if raw_tokens is not None else count_tokens(step.observation),
        compressed_tokens=tokens,
        reference_mode=settings.reference_mode,
        references=references,
        similarity=settings.similarity,
        threshold=settings.threshold,
    )


async def judge_step(
    name: str,
    job: StepJob,
    candidate: CandidateRecord | None,
    references: Sequence[Action],
    agent: Completer,
    settings: NapSettings,
    similarity: Similarity,
) -> EvalStepRecord:
    """The compressed step judged by the configured gate against `references`."""
    if not references:
        return base_record(name, job, candidate, settings, 0, NO_REFERENCE)
    if settings.aggregate == "agree" and len(references) < settings.agree_counts[1]:
        return base_record(name, job, candidate, settings, len(references), TOO_FEW)
    record = base_record(name, job, candidate, settings, len(references), None)
    shown = _as_judged(job, candidate, record.rendered)
    one = dataclasses.replace(settings, exhaustive=True)  # exactly this one candidate
    rows, _ = await judge(job, agent, [shown], references, one, similarity)
    verdict = next(r for r in rows if r.candidate_index == shown.candidate_index)
    return dataclasses.replace(
        record,
        agent_model=verdict.agent_model,
        agent_reply=verdict.reply,
        agent_action=verdict.action,
        format_error=verdict.format_error,
        similarities=list(verdict.similarities),
        score=verdict.aggregate,
        preserved=verdict.passed,
    )


def _as_judged(job: StepJob, candidate: CandidateRecord | None, rendered: str) -> CandidateRecord:
    """The row `judge` takes: the candidate with the text the agent sees."""
    if candidate is None:
        step = job.step
        return CandidateRecord(
            step.trajectory_id, step.step_index, 0, NO_REPLY, "", None, None, None, None,
            False, NO_REPLY, None, rendered, len(rendered), len(rendered), None, None,
        )  # fmt: skip
    return dataclasses.replace(candidate, rendered=rendered)
