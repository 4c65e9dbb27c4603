"""`eval --prefixes own|both`: a compressor judged in the context it makes once deployed, its
own outputs in place of the earlier eligible observations of the trajectory (an invalid output
leaves the raw text, as a deployed compressor that fails would). Side by side with the raw
prefixes, this shows whether a compressor trained on an online round holds up where the
offline one did not.

Every step is compressed once per compressor (`compress_all`); the raw-prefix rows and the
own-prefix rows judge the same outputs, so only the agent requests differ between the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from builder.errors import ConfigError, PermanentLLMError
from builder.evaluate.compressors import compress
from builder.llm.settled import gather_settled
from builder.nap.prefix import prefix_row, with_prefixes
from builder.nap.types import Completer, CompressorSampling, NapSettings, ReplaySettings, StepJob
from builder.steps.replay import COMPRESSED
from builder.teacher.specs import Spec
from schemas.candidates import CandidateRecord
from schemas.eval_steps import EvalStepRecord

RAW, OWN = "raw", "own"
CHOICES = {"raw": (RAW,), "own": (OWN,), "both": (RAW, OWN)}
Key = tuple[str, str, int]  # (compressor, trajectory, step)


@dataclass(frozen=True)
class PrefixTokens:
    """The earlier eligible observations of one own-prefix row: changed, raw and shown tokens."""

    replaced: int = 0
    raw: int = 0
    shown: int = 0


def prefix_modes(text: str) -> tuple[str, ...]:
    """`--prefixes` as the modes to evaluate."""
    if text not in CHOICES:
        raise ConfigError(f"--prefixes {text!r}: allowed values: {', '.join(CHOICES)}")
    return CHOICES[text]


async def compress_all(
    jobs: Sequence[StepJob],
    specs: Sequence[Spec],
    teacher: Completer,
    endpoint: Completer | None,
    settings: NapSettings,
    sampling: CompressorSampling | None,
) -> dict[Key, CandidateRecord | None]:
    """Every step compressed by every compressor (None: no reply, or a prompt too long for
    the compressor's context: the raw observation stays, as deployed)."""

    async def one(spec: Spec, job: StepJob) -> tuple[Key, CandidateRecord | None]:
        key = (spec.name, job.step.trajectory_id, job.step.step_index)
        try:
            found = await compress(
                spec, job, teacher=teacher, endpoint=endpoint, settings=settings,
                sampling=sampling,
            )  # fmt: skip
        except PermanentLLMError as exc:
            if exc.kind != "context_length":
                raise
            found = None
        return key, found

    pairs = await gather_settled(*(one(s, j) for s in specs for j in jobs))
    return dict(pairs)


def own_jobs(
    jobs: Sequence[StepJob],
    spec: Spec,
    candidates: Mapping[Key, CandidateRecord | None],
    settings: NapSettings,
) -> list[tuple[StepJob, PrefixTokens]]:
    """The jobs with `spec`'s outputs in place of their earlier eligible observations."""
    replay = ReplaySettings(prefix=COMPRESSED, compressor=spec.name, compressor_id=spec.name)
    own = dataclasses.replace(settings, replay=replay)
    rows = [
        prefix_row(j, candidates[(spec.name, j.step.trajectory_id, j.step.step_index)], own)
        for j in jobs
    ]
    totals: dict[tuple[str, int], tuple[int, int]] = {}  # (trajectory, obs) -> tokens before
    running: dict[str, tuple[int, int]] = {}
    for row in sorted(rows, key=lambda r: (r.trajectory_id, r.observation_message_index)):
        raw, shown = running.get(row.trajectory_id, (0, 0))
        totals[(row.trajectory_id, row.observation_message_index)] = (raw, shown)
        running[row.trajectory_id] = (raw + (row.raw_tokens or 0), shown + (row.shown_tokens or 0))
    out = []
    for item in with_prefixes(jobs, rows):
        job = item.job
        raw, shown = totals[(job.step.trajectory_id, job.step.observation_message_index)]
        out.append((job, PrefixTokens(len(job.prefix.texts), raw, shown)))
    return out


def marked(rows: Sequence[EvalStepRecord], mode: str, tokens: PrefixTokens) -> list[EvalStepRecord]:
    """The rows with their prefix mode and the tokens of their earlier observations."""
    return [
        dataclasses.replace(
            row,
            prefix_mode=mode,
            prefix_replaced=tokens.replaced,
            prefix_raw_tokens=tokens.raw,
            prefix_shown_tokens=tokens.shown,
        )
        for row in rows
    ]
