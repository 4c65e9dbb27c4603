"""`eval/<spec>/steps.parquet`: one compressor's result on one eligible step, judged by the gate.

`rendered` is what the agent saw in place of the raw observation: the compressor's rendered
output when it was valid, else the raw observation (`fell_back_to_raw`), as a deployed
compressor that fails would leave the output as it is. Steps that could not be judged (no
reference action, context too long) have `evaluated=False` and a `skip_reason`; they count in
no figure of the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from schemas.common import nested, with_version
from schemas.steps import ACTION_TYPE, Action

EVAL_STEP_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("compressor", pa.string(), nullable=False),  # the SPEC, e.g. rule:head_tail
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("intent", pa.string(), nullable=False),  # of the command whose output it is
            pa.field("command", pa.string()),
            pa.field("evaluated", pa.bool_(), nullable=False),
            pa.field("skip_reason", pa.string()),
            pa.field("reply", pa.string()),  # the compressor's raw answer (JSON for rules)
            pa.field("kind", pa.string()),  # unchanged | plain | code | null when unparseable
            pa.field("output", pa.string()),  # canonical JSON of the parsed output
            pa.field("valid", pa.bool_(), nullable=False),
            pa.field("invalid_reason", pa.string()),
            pa.field("fell_back_to_raw", pa.bool_(), nullable=False),
            pa.field("rendered", pa.string(), nullable=False),
            pa.field("raw_chars", pa.int64(), nullable=False),
            pa.field("compressed_chars", pa.int64(), nullable=False),
            pa.field("raw_tokens", pa.int64(), nullable=False),
            pa.field("compressed_tokens", pa.int64(), nullable=False),
            pa.field("reference_mode", pa.string(), nullable=False),
            pa.field("references", pa.int64(), nullable=False),  # usable reference actions
            pa.field("agent_model", pa.string()),
            pa.field("agent_reply", pa.string()),
            pa.field("agent_action", ACTION_TYPE),
            pa.field("format_error", pa.bool_(), nullable=False),
            pa.field("similarities", pa.list_(pa.float64())),  # one per reference
            pa.field("score", pa.float64()),  # the gate's aggregate
            pa.field("preserved", pa.bool_(), nullable=False),  # passed the gate
            pa.field("similarity", pa.string(), nullable=False),  # name of the similarity
            pa.field("threshold", pa.float64(), nullable=False),
            # raw: earlier observations as they ran; own: earlier eligible ones compressed by
            # this same compressor (the context it makes once deployed)
            pa.field("prefix_mode", pa.string(), nullable=False),
            pa.field("prefix_replaced", pa.int64(), nullable=False),  # earlier ones it changed
            pa.field("prefix_raw_tokens", pa.int64(), nullable=False),  # earlier eligible, raw
            pa.field("prefix_shown_tokens", pa.int64(), nullable=False),  # the same, as shown
        ]
    ),
    "eval_steps",
)


@dataclass(frozen=True, slots=True)
class EvalStepRecord:
    compressor: str
    trajectory_id: str
    step_index: int
    intent: str
    command: str | None
    evaluated: bool
    skip_reason: str | None
    reply: str | None
    kind: str | None
    output: str | None
    valid: bool
    invalid_reason: str | None
    fell_back_to_raw: bool
    rendered: str
    raw_chars: int
    compressed_chars: int
    raw_tokens: int
    compressed_tokens: int
    reference_mode: str
    references: int
    agent_model: str | None = None
    agent_reply: str | None = None
    agent_action: Action | None = nested(Action, default=None)
    format_error: bool = False
    similarities: list[float] = field(default_factory=list)
    score: float | None = None
    preserved: bool = False
    similarity: str = "semantic"
    threshold: float = 0.65
    prefix_mode: str = "raw"
    prefix_replaced: int = 0
    prefix_raw_tokens: int = 0
    prefix_shown_tokens: int = 0
