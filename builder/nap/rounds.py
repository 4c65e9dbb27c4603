"""What a round adds to a step's rows: the verdict on a deployed compression, the round and
prefix mode stamped on every row, and the step's `round_steps` row.

A deployed run's step is relabelled in the deployed context (earlier observations as the agent
saw them, this one raw), and the text its compressor showed at this step is judged by the same
gate as any candidate; it is not a candidate itself (it is a rendering, not a compressor answer
to train on), so its verdict goes to `round_steps` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from builder.llm.scoring import Scorer
from builder.nap.judging import judge
from builder.nap.likelihood_judging import likelihood_judge
from builder.nap.types import Completer, NapSettings, Similarity, StepJob, StepResult
from builder.steps.replay import COMPRESSED
from builder.teacher.prompt import PROMPT_VERSION
from schemas.candidates import CandidateRecord
from schemas.judgements import JudgementRecord
from schemas.references import ReferenceRecord
from schemas.round_steps import RoundStepRecord

DEPLOYED_INDEX = -2  # `candidate_index` of the deployed compression's verdict (no candidate's)
DEPLOYED_SOURCE = "deployed"
STAMPED = ("candidates", "references", "judgements", "supervision", "preferences")


def deployed_candidate(job: StepJob) -> CandidateRecord:
    """The text the deployed compressor showed at this step, as a row the gate can judge."""
    step = job.step
    shown = step.deployed_observation or ""
    return CandidateRecord(
        step.trajectory_id, step.step_index, DEPLOYED_INDEX, DEPLOYED_SOURCE, PROMPT_VERSION,
        None, None, None, None, True, None, None, shown, len(step.observation), len(shown),
        step.observation_tokens, None,
    )  # fmt: skip


async def deployed_verdict(
    job: StepJob,
    agent: Completer,
    scorer: Scorer | None,
    references: Sequence[ReferenceRecord],
    settings: NapSettings,
    similarity: Similarity,
) -> tuple[JudgementRecord | None, int]:
    """The gate's verdict on the deployed compression of a changed step, and requests sent
    (None for steps of other rounds, or without a reference action)."""
    if settings.replay.prefix != "deployed" or not job.step.deployed_changed:
        return None, 0
    actions = [r.action for r in references if r.action is not None]
    if not actions:
        return None, 0
    one = replace(settings, exhaustive=True)  # exactly this one text
    shown = [deployed_candidate(job)]
    if settings.gate_mode == "likelihood":
        assert scorer is not None
        rows, sent = await likelihood_judge(job, scorer, shown, references, one)
    else:
        rows, sent = await judge(job, agent, shown, actions, one, similarity)
    return (rows[0] if rows else None), sent


def stamp(result: StepResult, settings: NapSettings) -> StepResult:
    """Every NAP row of the step with the round and prefix mode (nothing to do in round 0)."""
    replay = settings.replay
    if replay.round == 0 and replay.prefix == "raw":
        return result
    marks: dict[str, Any] = {"round": replay.round, "prefix_mode": replay.prefix}
    for table in STAMPED:
        setattr(result, table, [replace(row, **marks) for row in getattr(result, table)])
    return result


def round_step(
    job: StepJob, result: StepResult, settings: NapSettings, processed: bool
) -> RoundStepRecord:
    """The step's `round_steps` row."""
    step, replay = job.step, settings.replay
    verdict = result.deployed
    deployed = step.deployed_changed if step.deployed_observation is not None else None
    return RoundStepRecord(
        trajectory_id=step.trajectory_id,
        step_index=step.step_index,
        round=replay.round,
        prefix_mode=replay.prefix,
        prefix_compressor=replay.compressor_id if replay.prefix == COMPRESSED else None,
        prefix_replaced=job.prefix.replaced(job.traj, step, job.adapter),
        processed=processed,
        dropped=result.dropped,
        supervision_rows=len(result.supervision),
        deployed_changed=deployed,
        deployed_passed=verdict.passed if verdict is not None else None,
        deployed_score=verdict.aggregate if verdict is not None else None,
        deployed_action=verdict.action if verdict is not None else None,
    )
