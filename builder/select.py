"""Selection: which judged candidates of a step become supervision, and preference pairs.

Decisions (all deterministic, so reruns give the same rows):
- Candidates are judged shortest-first: `judge_order` sorts the unique valid candidates by
  rendered characters, then candidate index.
- `select` keeps the first `max_per_step` passing candidates in that order, i.e. the m shortest
  passers. The length reward is computed among the *selected* rows only (shortest +0.5, longest
  -0.5, linear between; all equal, or a single row, +0.5). Passers longer than the m-th do not
  change it, so a run that stops judging after m passes (`early_exit_ok`) produces exactly the
  rows an exhaustive run does, provided every candidate before the m-th passer was judged.
- When nothing passes, the step is dropped with a reason, or (`fallback="unchanged"`) one
  `{"type": "unchanged"}` row is emitted: `is_fallback=True`, `candidate_index=-1`,
  `source="fallback"`, rendered = raw, similarity and length reward null. The fallback needs
  a reference action (the agent acting on the raw observation): without one nothing supports
  even `unchanged`, and the step is dropped as `no_reference_action`.
- The control row of a step (`is_control`, the raw observation judged to measure the judge)
  is never a target nor half of a preference pair; only `fallback="unchanged"` emits the
  raw observation, and then as its own fallback row.
- Preference pairs: chosen = passing, rejected = failing judged candidates of the step, both in
  judge order, paired along diagonals (so the first pairs use distinct candidates) and capped.
  Format-error judgements are not used as rejected by default: they say more about the agent
  model than about the candidate. Early exit judges fewer failing candidates, so preference
  pairs want an exhaustive run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Literal, TypeVar

from builder.steps.tokens import count_tokens
from builder.teacher.output import UNCHANGED
from schemas.candidates import CandidateRecord
from schemas.judgements import JudgementRecord
from schemas.preferences import PreferenceRecord
from schemas.steps import StepRecord
from schemas.supervision import ChatMessage, SupervisionRecord

Fallback = Literal["drop", "unchanged"]
_Row = TypeVar("_Row", CandidateRecord, JudgementRecord)
NO_VALID_CANDIDATE = "no_valid_candidate"
NO_CANDIDATE_PASSED = "no_candidate_passed"
NO_REFERENCE_ACTION = "no_reference_action"
FALLBACK_INDEX = -1
FALLBACK_SOURCE = "fallback"
DEFAULT_MAX_PER_STEP = 4
DEFAULT_MAX_PAIRS = 4


@dataclass(frozen=True)
class Selection:
    """Supervision rows of one step; `drop_reason` is set exactly when `rows` is empty."""

    rows: list[SupervisionRecord] = field(default_factory=list)
    drop_reason: str | None = None


def length_rewards(lengths: Sequence[int]) -> list[float]:
    """Shortest +0.5, longest -0.5, linear between; +0.5 for all when they are equal."""
    if not lengths:
        return []
    low, high = min(lengths), max(lengths)
    if high == low:
        return [0.5] * len(lengths)
    return [0.5 - (n - low) / (high - low) for n in lengths]


def judge_order(candidates: Iterable[CandidateRecord]) -> list[CandidateRecord]:
    """Unique valid candidates, shortest rendered text first (ties by candidate index)."""
    valid = [c for c in candidates if c.valid and c.rendered_chars is not None]
    return sorted(valid, key=lambda c: (c.rendered_chars, c.candidate_index))


def early_exit_ok(judgements: Iterable[JudgementRecord], max_per_step: int) -> bool:
    """True once `max_per_step` judged candidates passed: judging more cannot change `select`."""
    return sum(1 for j in judgements if j.passed) >= max_per_step


def select(
    step: StepRecord,
    candidates: Iterable[CandidateRecord],
    judgements: Iterable[JudgementRecord],
    *,
    system: str,
    prompt: str,
    prompt_version: str,
    max_per_step: int = DEFAULT_MAX_PER_STEP,
    fallback: Fallback = "drop",
    agent_model: str | None = None,
    has_reference_action: bool = True,
) -> Selection:
    """The supervision rows of `step` (rows of other steps in the inputs are ignored).

    `has_reference_action` is False when no reference action of the step could be parsed;
    then no fallback row is emitted.
    """
    if fallback not in ("drop", "unchanged"):
        raise ValueError(f"fallback must be 'drop' or 'unchanged', got {fallback!r}")
    order = judge_order(_of_step(step, candidates))
    verdicts = _first_judgements(_of_step(step, judgements))
    passing = [
        (c, verdicts[c.candidate_index])
        for c in order
        if c.candidate_index in verdicts and verdicts[c.candidate_index].passed
    ]
    chosen = passing[:max_per_step]
    if not chosen:
        if not has_reference_action:
            return Selection([], NO_REFERENCE_ACTION)
        if fallback == "unchanged":
            return Selection([_fallback_row(step, system, prompt, prompt_version, agent_model)])
        return Selection([], NO_VALID_CANDIDATE if not order else NO_CANDIDATE_PASSED)
    rewards = length_rewards([c.rendered_chars or 0 for c, _ in chosen])
    rows = [
        _row(step, c, j, rank, reward, system, prompt)
        for rank, ((c, j), reward) in enumerate(zip(chosen, rewards, strict=True))
    ]
    return Selection(rows)


def preference_pairs(
    step: StepRecord,
    candidates: Iterable[CandidateRecord],
    judgements: Iterable[JudgementRecord],
    *,
    system: str,
    prompt: str,
    prompt_version: str,
    max_pairs: int | None = DEFAULT_MAX_PAIRS,
    include_format_errors: bool = False,
) -> list[PreferenceRecord]:
    """Up to `max_pairs` (passing, failing) pairs of judged candidates of `step`."""
    verdicts = _first_judgements(_of_step(step, judgements))
    judged = [
        (c, verdicts[c.candidate_index])
        for c in judge_order(_of_step(step, candidates))
        if c.candidate_index in verdicts
    ]
    chosen = [(c, j) for c, j in judged if j.passed]
    rejected = [
        (c, j) for c, j in judged if not j.passed and (include_format_errors or not j.format_error)
    ]
    pairs = sorted(product(range(len(chosen)), range(len(rejected))), key=lambda p: (sum(p), p))
    return [
        PreferenceRecord(
            trajectory_id=step.trajectory_id,
            step_index=step.step_index,
            chosen_candidate_index=chosen[i][0].candidate_index,
            rejected_candidate_index=rejected[k][0].candidate_index,
            system=system,
            prompt=prompt,
            chosen=chosen[i][0].output or "",
            rejected=rejected[k][0].output or "",
            chosen_similarity=chosen[i][1].aggregate,
            rejected_similarity=rejected[k][1].aggregate,
            prompt_version=prompt_version,
        )
        for i, k in pairs[:max_pairs]
    ]


def _of_step(step: StepRecord, rows: Iterable[_Row]) -> list[_Row]:
    return [
        r for r in rows if r.trajectory_id == step.trajectory_id and r.step_index == step.step_index
    ]


def _first_judgements(judgements: Iterable[JudgementRecord]) -> dict[int, JudgementRecord]:
    """One judgement per candidate: the earliest judged, should a candidate appear twice.
    Control rows are not candidates: they never become targets or preference pairs."""
    first: dict[int, JudgementRecord] = {}
    for j in sorted(judgements, key=lambda j: j.judge_order):
        if not j.is_control:
            first.setdefault(j.candidate_index, j)
    return first


def _messages(system: str, prompt: str, target: str) -> list[ChatMessage]:
    return [
        ChatMessage("system", system),
        ChatMessage("user", prompt),
        ChatMessage("assistant", target),
    ]


def _row(
    step: StepRecord,
    c: CandidateRecord,
    j: JudgementRecord,
    rank: int,
    reward: float,
    system: str,
    prompt: str,
) -> SupervisionRecord:
    target = c.output or ""
    return SupervisionRecord(
        trajectory_id=step.trajectory_id,
        step_index=step.step_index,
        candidate_index=c.candidate_index,
        rank=rank,
        source=c.source,
        system=system,
        prompt=prompt,
        target=target,
        messages=_messages(system, prompt, target),
        rendered=c.rendered or "",
        raw_chars=c.raw_chars,
        rendered_chars=c.rendered_chars or 0,
        raw_tokens=c.raw_tokens,
        rendered_tokens=c.rendered_tokens,
        similarity=j.aggregate,
        length_reward=reward,
        is_fallback=False,
        teacher_model=c.teacher_model,
        agent_model=j.agent_model,
        prompt_version=c.prompt_version,
    )


def _fallback_row(
    step: StepRecord, system: str, prompt: str, prompt_version: str, agent_model: str | None
) -> SupervisionRecord:
    raw = step.observation
    tokens = count_tokens(raw)
    target = UNCHANGED.to_json()
    return SupervisionRecord(
        trajectory_id=step.trajectory_id,
        step_index=step.step_index,
        candidate_index=FALLBACK_INDEX,
        rank=0,
        source=FALLBACK_SOURCE,
        system=system,
        prompt=prompt,
        target=target,
        messages=_messages(system, prompt, target),
        rendered=raw,
        raw_chars=len(raw),
        rendered_chars=len(raw),
        raw_tokens=tokens,
        rendered_tokens=tokens,
        similarity=None,
        length_reward=None,
        is_fallback=True,
        teacher_model=None,
        agent_model=agent_model,
        prompt_version=prompt_version,
    )
