"""Next-action preservation for one step: candidates, references, judgements, selection.

The LLM calls live in the NAP core and nowhere else: this module (the teacher and the step as a
whole), `nap_agent` (references), `nap_judging` and `nap_likelihood` (the two gates). Prompt
building, parsing, similarity, the gate and selection are pure functions in their own modules.
All agent requests of a step share the context prefix and are issued back to back, so prefix
caches hit.
"""

from __future__ import annotations

import json
import logging

from builder.llm.protocol import ChatRequest
from builder.llm.scoring import Scorer
from builder.llm.settled import gather_settled
from builder.nap.agent import agent_request, references_for, sample_actions
from builder.nap.judging import control_for, generate_verdict, judge, judge_waves
from builder.nap.likelihood_judging import likelihood_judge
from builder.nap.rounds import deployed_verdict
from builder.nap.situated import situated_similarity
from builder.nap.types import Completer, JudgeOne, NapSettings, Similarity, StepJob, StepResult
from builder.select import judge_order, preference_pairs, select
from builder.steps.pairing import message_tokens
from builder.steps.replay import context_end, tools_of
from builder.steps.tokens import count_tokens
from builder.teacher.candidates import build_candidates
from builder.teacher.prompt import PROMPT_VERSION, build_prompt, teacher_request
from schemas.candidates import CandidateRecord
from schemas.steps import Action

log = logging.getLogger(__name__)

__all__ = [
    "Completer",
    "JudgeOne",
    "NapSettings",
    "Similarity",
    "StepJob",
    "StepResult",
    "agent_request",
    "compressor_prompt",
    "control_for",
    "generate_verdict",
    "judge",
    "judge_waves",
    "process_step",
    "references_for",
    "sample_actions",
    "step_teacher_request",
    "teacher_candidates",
]


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


def step_teacher_request(job: StepJob, settings: NapSettings) -> ChatRequest:
    """The teacher request of a step (`plan` builds the very same one to count and dedup)."""
    system, user = compressor_prompt(job)
    return teacher_request(
        system,
        user,
        n=settings.teacher_samples,
        temperature=settings.teacher_temperature,
        max_tokens=settings.teacher_max_tokens,
        seed=settings.seed,
        structured=settings.teacher_structured,
    )


async def teacher_candidates(
    job: StepJob, teacher: Completer, settings: NapSettings
) -> list[CandidateRecord]:
    replies: list[str] = []
    if settings.teacher_samples > 0:
        request = step_teacher_request(job, settings)
        response = await teacher.complete(request, stage="teacher")
        replies = [c.text for c in response.completions]
    return build_candidates(
        job.step,
        replies,
        settings.rules,
        teacher_model=teacher.provider.model,
        prompt_version=PROMPT_VERSION,
    )


CONTEXT_WINDOW_DROP = "context_window"  # the pre-flight check's drop reason


def agent_context_tokens(job: StepJob) -> int:
    """cl100k tokens of the step's raw agent context: the messages before the observation
    (counted at ingest), the observation and what follows it, and the tool schemas."""
    messages = job.traj.messages
    end = context_end(list(messages), job.step.observation_message_index)
    tail = sum(message_tokens(m) for m in messages[job.step.observation_message_index : end])
    tools = tools_of(job.traj)
    schema = count_tokens(json.dumps(tools)) if tools else 0
    return (job.step.prefix_tokens or 0) + tail + schema


def over_window(job: StepJob, settings: NapSettings) -> bool:
    """Whether the agent's context and reply cannot fit `agent_context_window` (every agent
    request of the step carries at most the raw context: candidates are never longer)."""
    window = settings.agent_context_window
    if window is None:
        return False
    return agent_context_tokens(job) + settings.agent_max_tokens > window


TOO_FEW_REFERENCES = "too_few_references"


def _too_few(actions: list[Action], settings: NapSettings) -> bool:
    """Fewer valid references than the `agree` rule needs to say anything (its other
    aggregates judge on any number, as before)."""
    return settings.aggregate == "agree" and len(actions) < settings.agree_counts[1]


async def process_step(
    job: StepJob,
    teacher: Completer,
    agent: Completer,
    settings: NapSettings,
    similarity: Similarity,
    scorer: Scorer | None = None,
) -> StepResult:
    """Everything NAP does for one eligible step; tables rows come back, nothing is written.
    `scorer` gives prompt log-probabilities; only `gate_mode="likelihood"` needs it. A step
    over the agent's context window is dropped before anything is sent."""
    if over_window(job, settings):
        return StepResult(dropped=CONTEXT_WINDOW_DROP)
    similarity = situated_similarity(similarity, job)
    candidates, references = await gather_settled(
        teacher_candidates(job, teacher, settings),
        references_for(job, agent, settings, similarity),
    )
    result = StepResult(candidates=candidates, references=references)
    result.agent_requests = sum(r.attempts for r in references if r.mode == "sampled")
    actions = [r.action for r in references if r.action is not None]
    order = judge_order(candidates)
    judged = bool(actions) and not _too_few(actions, settings)
    result.judge_requests_exhaustive = len(order) if judged else 0
    if not actions:
        result.dropped = "no_reference_action"
    elif not judged:
        result.dropped = TOO_FEW_REFERENCES
        log.info(
            "step %s/%d not judged: %d valid reference(s), gate.min_references is %d",
            job.step.trajectory_id,
            job.step.step_index,
            len(actions),
            settings.agree_counts[1],
        )
    else:
        if settings.gate_mode == "likelihood":
            if scorer is None:
                raise ValueError("gate_mode 'likelihood' needs a scorer (prompt log-probabilities)")
            judging = likelihood_judge(job, scorer, order, references, settings)
        else:
            judging = judge(job, agent, order, actions, settings, similarity)
        both = gather_settled(judging, control_for(job, agent, references, settings, similarity))
        deployed = deployed_verdict(job, agent, scorer, references, settings, similarity)
        (
            ((result.judgements, sent), (control, control_sent)),
            (result.deployed, deployed_sent),
        ) = await gather_settled(both, deployed)
        result.judge_requests = sent
        result.control_requests = control_sent
        result.agent_requests += sent + control_sent + deployed_sent
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
        has_reference_action=judged,
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
