"""The context a round judges each step in: on-policy prefixes and deployed runs.

`replay.prefix: compressed`: every eligible observation that precedes another eligible step of
its trajectory is compressed once by the prefix compressor (a `rule:`, the teacher, or a
trained compressor behind an endpoint; its requests go through the run's cache like any
other), and each step's job carries the outputs of the steps before it (`Prefix.texts`). An
invalid output leaves the raw observation, as a deployed compressor that fails would. Each
output is recorded (`prefixes` table) so the exact context judged can be rebuilt.

`replay.prefix: deployed`: the context is kept as logged and only the steps the deployed
compressor changed are relabelled; the others are skipped (`deployed_unchanged`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from builder.errors import PermanentLLMError, TransientLLMError
from builder.evaluate.compressors import compress
from builder.llm.settled import gather_settled
from builder.nap.types import Completer, NapSettings, StepJob
from builder.steps.replay import COMPRESSED, DEPLOYED, Prefix
from builder.teacher.specs import parse_spec
from schemas.candidates import CandidateRecord
from schemas.prefixes import PrefixRecord

DEPLOYED_UNCHANGED = "deployed_unchanged"


@dataclass(frozen=True)
class ReplayJob:
    """A step ready for `process_step`, or skipped (`skip` says why), with the prefix row
    recording its own observation's compression (None when no later step shows it)."""

    job: StepJob
    skip: str | None = None
    prefix_row: PrefixRecord | None = None
    failed: TransientLLMError | None = None  # a compression its prefix needs spent its retries


async def replay_jobs(
    jobs: Sequence[StepJob],
    teacher: Completer,
    endpoint: Completer | None,
    settings: NapSettings,
) -> list[ReplayJob]:
    """The shard's jobs in the round's context, in their order (see the module)."""
    mode = settings.replay.prefix
    if mode == DEPLOYED:
        return [
            ReplayJob(deployed(j))
            if j.step.deployed_changed
            else ReplayJob(j, skip=DEPLOYED_UNCHANGED)
            for j in jobs
        ]
    if mode != COMPRESSED:
        return [ReplayJob(j) for j in jobs]
    shown_later = _with_later_step(jobs)
    later = [j for j in jobs if _key(j) in shown_later]
    found = await gather_settled(*(_compressed(j, teacher, endpoint, settings) for j in later))
    failures: dict[str, tuple[int, TransientLLMError]] = {}  # trajectory -> first one failed
    for job, row in zip(later, found, strict=True):
        index = job.step.observation_message_index
        first = failures.get(job.step.trajectory_id)
        if isinstance(row, TransientLLMError) and (first is None or index < first[0]):
            failures[job.step.trajectory_id] = (index, row)
    rows = [r for r in found if isinstance(r, PrefixRecord)]
    out = with_prefixes(jobs, rows)
    return [_failed_after(item, failures.get(item.job.step.trajectory_id)) for item in out]


def _failed_after(item: ReplayJob, failure: tuple[int, TransientLLMError] | None) -> ReplayJob:
    """A step after a compression that failed cannot be judged in its exact context: it is
    given up on (its shard is redone by the same command; the cache answers the rest)."""
    if failure is None or item.job.step.observation_message_index <= failure[0]:
        return item
    return replace(item, failed=failure[1])


def with_prefixes(jobs: Sequence[StepJob], rows: Sequence[PrefixRecord]) -> list[ReplayJob]:
    """Each job with the compressed texts of the eligible steps before it in its trajectory
    (`rows`: what each observation shows later; one that shows its raw text stays as logged),
    in the jobs' order."""
    shown = {(r.trajectory_id, r.step_index): r for r in rows}
    out: list[ReplayJob] = []
    texts: dict[str, list[tuple[int, str]]] = {}
    for job in sorted(jobs, key=_position):
        earlier = texts.setdefault(job.step.trajectory_id, [])
        prefixed = replace(job, prefix=Prefix(COMPRESSED, tuple(earlier)))
        row = shown.get(_key(job))
        if row is not None and row.shown != job.step.observation:  # else the message as logged
            earlier.append((row.observation_message_index, row.shown))
        out.append(ReplayJob(prefixed, prefix_row=row))
    order = {_key(j): i for i, j in enumerate(jobs)}
    return sorted(out, key=lambda r: order[_key(r.job)])


def deployed(job: StepJob) -> StepJob:
    """The job in a deployed run's context: earlier observations as the agent saw them."""
    return replace(job, prefix=Prefix(DEPLOYED))


def _key(job: StepJob) -> tuple[str, int]:
    return job.step.trajectory_id, job.step.step_index


def _position(job: StepJob) -> tuple[str, int]:
    return job.step.trajectory_id, job.step.observation_message_index


def _with_later_step(jobs: Sequence[StepJob]) -> set[tuple[str, int]]:
    """Steps whose observation precedes another eligible step of the same trajectory: the
    ones some prefix shows (a shard holds whole trajectories)."""
    last: dict[str, int] = {}
    for job in jobs:
        index = job.step.observation_message_index
        last[job.step.trajectory_id] = max(last.get(job.step.trajectory_id, -1), index)
    return {_key(j) for j in jobs if j.step.observation_message_index < last[j.step.trajectory_id]}


async def _compressed(
    job: StepJob, teacher: Completer, endpoint: Completer | None, settings: NapSettings
) -> PrefixRecord | TransientLLMError:
    """The prefix compressor's output for this step's observation, as later steps show it
    (the error, when its request spent its retries)."""
    replay = settings.replay
    assert replay.compressor is not None
    spec = parse_spec(replay.compressor, has_endpoint=endpoint is not None)
    invalid = None
    try:
        candidate = await compress(
            spec, job, teacher=teacher, endpoint=endpoint, settings=settings,
            sampling=replay.endpoint,
        )  # fmt: skip
    except PermanentLLMError as exc:
        if exc.kind != "context_length":
            raise
        candidate, invalid = None, "context_too_long"  # a deployed compressor would pass it on
    except TransientLLMError as exc:
        return exc
    return prefix_row(job, candidate, settings, invalid)


def prefix_row(
    job: StepJob,
    candidate: CandidateRecord | None,
    settings: NapSettings,
    invalid: str | None = None,
) -> PrefixRecord:
    """What later steps show of this observation: the rendered output, else the raw text."""
    step, replay = job.step, settings.replay
    ok = candidate is not None and candidate.valid and candidate.rendered is not None
    raw_tokens = candidate.raw_tokens if candidate is not None else step.observation_tokens
    shown_tokens = candidate.rendered_tokens if ok and candidate is not None else raw_tokens
    return PrefixRecord(
        trajectory_id=step.trajectory_id,
        step_index=step.step_index,
        observation_message_index=step.observation_message_index,
        compressor=replay.compressor or "",
        compressor_id=replay.compressor_id or replay.compressor or "",
        kind=candidate.kind if candidate is not None else None,
        output=candidate.output if candidate is not None else None,
        valid=ok,
        invalid_reason=invalid or (candidate.invalid_reason if candidate else "no_reply"),
        fell_back_to_raw=not ok,
        shown=candidate.rendered if ok and candidate and candidate.rendered else step.observation,
        raw_tokens=raw_tokens,
        shown_tokens=shown_tokens,
        round=replay.round,
        prefix_mode=replay.prefix,
    )
