"""Compressor SPECs and how each compresses one step's observation into a candidate row.

Every compressor's answer goes through the same parse / validate / render path as the teacher's
(`builder.teacher.candidates`), so a compressor is measured on exactly what the agent would see.
`unchanged` and `omit` are answers written here, rules come from the rule registry, `teacher`
is the config's teacher (its first valid sample, so the request equals the run's and hits the
cache) and `endpoint` is the config's `compressor:` block.
"""

from __future__ import annotations

import dataclasses
import json

from builder.config import PipelineConfig
from builder.errors import ConfigError
from builder.nap.step import Completer, NapSettings, StepJob, compressor_prompt, teacher_candidates
from builder.nap.types import CompressorSampling
from builder.teacher import specs as grammar
from builder.teacher.candidates import candidates_from_replies, rule_candidates
from builder.teacher.output import UNCHANGED, CompressorOutput
from builder.teacher.prompt import PROMPT_VERSION, teacher_request
from builder.teacher.specs import Spec
from schemas.candidates import CandidateRecord

OMIT_PLACEHOLDER = "(output omitted)"
OMIT = CompressorOutput("plain", text=OMIT_PLACEHOLDER)  # rendered: the plain marker + this line


def parse_spec(text: str, cfg: PipelineConfig) -> Spec:
    """A `--compressor` SPEC checked against the config: known rule, configured endpoint."""
    return grammar.parse_spec(text, has_endpoint=cfg.compressor is not None)


def parse_specs(texts: list[str], cfg: PipelineConfig) -> list[Spec]:
    """Every SPEC, in order, without repeats."""
    found: list[Spec] = []
    for text in texts:
        spec = parse_spec(text, cfg)
        if spec not in found:
            found.append(spec)
    if not found:
        raise ConfigError("give at least one --compressor SPEC")
    return found


def _written(job: StepJob, output: CompressorOutput, source: str) -> CandidateRecord:
    reply = output.to_json()
    row = candidates_from_replies(
        job.step, [reply], teacher_model=None, prompt_version=PROMPT_VERSION
    )
    return dataclasses.replace(row[0], source=source)


def first_valid(rows: list[CandidateRecord]) -> CandidateRecord | None:
    """The first valid row, else the first row (whose reason says why none was valid)."""
    return next((r for r in rows if r.valid), rows[0] if rows else None)


async def compress(
    spec: Spec,
    job: StepJob,
    *,
    teacher: Completer,
    endpoint: Completer | None,
    settings: NapSettings,
    sampling: CompressorSampling | None = None,
) -> CandidateRecord | None:
    """The candidate row `spec` makes for this step (None: the teacher gave no reply);
    `sampling` is the `endpoint` compressor's (its `compressor:` block)."""
    if spec.kind == "unchanged":
        return _written(job, UNCHANGED, spec.name)
    if spec.kind == "omit":
        return _written(job, OMIT, spec.name)
    if spec.kind == "rule":
        assert spec.rule is not None
        return rule_candidates(job.step, [spec.rule], prompt_version=PROMPT_VERSION)[0]
    if spec.kind == "teacher":
        rows = await teacher_candidates(job, teacher, dataclasses.replace(settings, rules=()))
        return first_valid(rows)
    assert endpoint is not None and sampling is not None
    system, user = compressor_prompt(job)
    request = teacher_request(
        system,
        user,
        n=1,
        temperature=sampling.temperature,
        max_tokens=sampling.max_tokens,
        seed=settings.seed,
        structured=sampling.structured,
    )
    response = await endpoint.complete(request, stage="compressor")
    replies = [c.text for c in response.completions][:1]
    rows = candidates_from_replies(
        job.step, replies, teacher_model=endpoint.provider.model, prompt_version=PROMPT_VERSION
    )
    return dataclasses.replace(rows[0], source=spec.name) if rows else None


def describe(spec: Spec, cfg: PipelineConfig) -> str:
    """What the compressor is, for the report (model names, never keys)."""
    if spec.kind == "teacher":
        return f"teacher {cfg.teacher.model} (first valid of {cfg.teacher.samples} samples)"
    if spec.kind == "endpoint" and cfg.compressor is not None:
        return f"endpoint {cfg.compressor.model}"
    if spec.kind == "omit":
        return f"observation replaced by {json.dumps(OMIT_PLACEHOLDER)}"
    return spec.name
