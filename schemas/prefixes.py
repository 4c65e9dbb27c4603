"""`prefixes` table: each earlier observation a prefix-compressed round showed the agent in
place of the raw one (`replay.prefix: compressed`), so the exact context of every judged step
can be rebuilt from `trajectories` and this table (`builder.steps.replay.agent_context`).

One row per eligible observation that precedes another eligible step of its trajectory: the
compressor's answer, whether it was valid, and the text shown (the rendered output, or the raw
observation when the output was invalid, as a deployed compressor that fails would leave it).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import ROUND_FIELDS, with_version

PREFIX_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),  # the compressed observation's
            pa.field("observation_message_index", pa.int64(), nullable=False),
            pa.field("compressor", pa.string(), nullable=False),  # the SPEC, e.g. rule:head_tail
            pa.field("compressor_id", pa.string(), nullable=False),  # SPEC with model, if any
            pa.field("kind", pa.string()),  # unchanged | plain | code | null when unparseable
            pa.field("output", pa.string()),  # canonical JSON of the parsed output
            pa.field("valid", pa.bool_(), nullable=False),
            pa.field("invalid_reason", pa.string()),
            pa.field("fell_back_to_raw", pa.bool_(), nullable=False),
            pa.field("shown", pa.string(), nullable=False),  # the payload later steps carry
            pa.field("raw_tokens", pa.int64()),
            pa.field("shown_tokens", pa.int64()),
            *ROUND_FIELDS,
        ]
    ),
    "prefixes",
)


@dataclass(frozen=True, slots=True)
class PrefixRecord:
    trajectory_id: str
    step_index: int
    observation_message_index: int
    compressor: str
    compressor_id: str
    kind: str | None
    output: str | None
    valid: bool
    invalid_reason: str | None
    fell_back_to_raw: bool
    shown: str
    raw_tokens: int | None
    shown_tokens: int | None
    round: int
    prefix_mode: str
