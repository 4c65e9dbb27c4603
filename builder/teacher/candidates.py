"""Candidate rows for one step: teacher replies and rule outputs, parsed, checked and rendered.

Every proposal becomes a row, valid or not, so the table accounts for all of them:
- unparseable replies: `valid=False`, `invalid_reason` from the parser, `kind`/`output` null;
- parsed but invalid outputs: the validation reason; `rendered` is filled when the output could
  be rendered at all (so `too_long` rows show their render);
- a rule that does not apply to this output: `invalid_reason="not_applicable"`;
- a valid candidate whose rendered text equals an earlier valid candidate's (of this step):
  `valid=False`, `invalid_reason="duplicate"`, `duplicate_of=<index of the first>`, rendered
  filled. Only valid, non-duplicate rows are judged, so identical renders are judged once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from builder.errors import ConfigError
from builder.steps.tokens import count_tokens
from builder.teacher.output import CompressorOutput
from builder.teacher.parse import parse_output
from builder.teacher.render import render_checked
from builder.teacher.rules import RULES
from schemas.candidates import CandidateRecord
from schemas.steps import StepRecord

TEACHER_SOURCE = "teacher"
RULE_PREFIX = "rule:"
DUPLICATE = "duplicate"
NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True)
class _Proposal:
    source: str
    reply: str | None
    parsed: CompressorOutput | str  # a parse / applicability failure is its reason


def candidates_from_replies(
    step: StepRecord,
    replies: Sequence[str],
    *,
    teacher_model: str | None,
    prompt_version: str,
    start_index: int = 0,
    earlier: Iterable[CandidateRecord] = (),
) -> list[CandidateRecord]:
    """One row per teacher reply, indexed from `start_index`; duplicates are found against
    `earlier` rows of the same step as well as among these."""
    proposals = []
    for reply in replies:
        parsed = parse_output(reply)
        proposals.append(
            _Proposal(
                TEACHER_SOURCE,
                reply,
                parsed if isinstance(parsed, CompressorOutput) else parsed.reason,
            )
        )
    return _rows(step, proposals, teacher_model, prompt_version, start_index, earlier)


def rule_candidates(
    step: StepRecord,
    names: Sequence[str],
    start_index: int = 0,
    *,
    prompt_version: str,
    earlier: Iterable[CandidateRecord] = (),
) -> list[CandidateRecord]:
    """One row per rule in `names` (source `rule:<name>`); unknown names are a config error."""
    unknown = [n for n in names if n not in RULES]
    if unknown:
        raise ConfigError(f"unknown rule(s) {unknown}; known rules: {sorted(RULES)}")
    proposals = []
    for name in names:
        output = RULES[name](step.observation, step.action)
        reply = output.to_json() if output is not None else None
        proposals.append(_Proposal(RULE_PREFIX + name, reply, output or NOT_APPLICABLE))
    return _rows(step, proposals, None, prompt_version, start_index, earlier)


def build_candidates(
    step: StepRecord,
    replies: Sequence[str],
    rule_names: Sequence[str] = (),
    *,
    teacher_model: str | None,
    prompt_version: str,
) -> list[CandidateRecord]:
    """All rows of a step: teacher replies first (indices 0..K-1), then rules."""
    teacher = candidates_from_replies(
        step, replies, teacher_model=teacher_model, prompt_version=prompt_version
    )
    rules = rule_candidates(
        step, rule_names, len(teacher), prompt_version=prompt_version, earlier=teacher
    )
    return teacher + rules


def _rows(
    step: StepRecord,
    proposals: Sequence[_Proposal],
    teacher_model: str | None,
    prompt_version: str,
    start_index: int,
    earlier: Iterable[CandidateRecord],
) -> list[CandidateRecord]:
    raw = step.observation
    raw_tokens = count_tokens(raw)
    first_index = {c.rendered: c.candidate_index for c in earlier if c.valid and c.rendered}
    rows = []
    for offset, p in enumerate(proposals):
        index = start_index + offset
        kind = output = rendered = None
        reason: str | None
        duplicate_of = None
        if isinstance(p.parsed, str):
            reason = p.parsed
        else:
            kind, output = p.parsed.kind, p.parsed.to_json()
            rendered, reason = render_checked(p.parsed, raw)
            if reason is None and rendered is not None:
                duplicate_of = first_index.setdefault(rendered, index)
                if duplicate_of == index:
                    duplicate_of = None
                else:
                    reason = DUPLICATE
        rows.append(
            CandidateRecord(
                trajectory_id=step.trajectory_id,
                step_index=step.step_index,
                candidate_index=index,
                source=p.source,
                prompt_version=prompt_version,
                teacher_model=teacher_model if p.source == TEACHER_SOURCE else None,
                reply=p.reply,
                kind=kind,
                output=output,
                valid=reason is None,
                invalid_reason=reason,
                duplicate_of=duplicate_of,
                rendered=rendered,
                raw_chars=len(raw),
                rendered_chars=len(rendered) if rendered is not None else None,
                raw_tokens=raw_tokens,
                rendered_tokens=count_tokens(rendered) if rendered is not None else None,
            )
        )
    return rows
