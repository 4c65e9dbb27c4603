"""`candidates` table: every compression proposed for a step (teacher samples and rules),
kept even when invalid or duplicate, with the reason."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import RAW_PREFIX, ROUND_FIELDS, with_version

CANDIDATE_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("candidate_index", pa.int64(), nullable=False),
            pa.field("source", pa.string(), nullable=False),  # teacher | rule:<name>
            pa.field("prompt_version", pa.string(), nullable=False),
            pa.field("teacher_model", pa.string()),
            pa.field("reply", pa.string()),  # the raw text the source produced
            pa.field("kind", pa.string()),  # unchanged | plain | code | null when unparseable
            pa.field("output", pa.string()),  # canonical JSON of the parsed compressor output
            pa.field("valid", pa.bool_(), nullable=False),
            pa.field("invalid_reason", pa.string()),  # invalid_json, bad_ranges, too_long, ...
            pa.field("duplicate_of", pa.int64()),  # candidate_index of the first identical render
            pa.field("rendered", pa.string()),  # what the agent would see
            pa.field("raw_chars", pa.int64()),
            pa.field("rendered_chars", pa.int64()),
            pa.field("raw_tokens", pa.int64()),
            pa.field("rendered_tokens", pa.int64()),
            *ROUND_FIELDS,
        ]
    ),
    "candidates",
)


@dataclass(frozen=True, slots=True)
class CandidateRecord:
    trajectory_id: str
    step_index: int
    candidate_index: int
    source: str
    prompt_version: str
    teacher_model: str | None
    reply: str | None
    kind: str | None
    output: str | None
    valid: bool
    invalid_reason: str | None
    duplicate_of: int | None
    rendered: str | None
    raw_chars: int
    rendered_chars: int | None
    raw_tokens: int | None
    rendered_tokens: int | None
    round: int = 0
    prefix_mode: str = RAW_PREFIX
