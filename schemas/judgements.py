"""`judgements` table: the agent's action with a candidate in place, and the NAP gate verdict.

Two kinds of rows: candidate rows, and one control row per judged step (`is_control`,
`candidate_index` = `CONTROL_INDEX`): the raw observation judged as an `unchanged` control, which
measures whether the agent reproduces its reference at all. `gate_mode` says how the verdict was
reached: `generate` (the agent's action compared by similarity) or `likelihood` (`scores` holds
one log-probability score per reference, `similarities` its capped exponential).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from schemas.common import RAW_PREFIX, ROUND_FIELDS, nested, with_version
from schemas.steps import ACTION_TYPE, Action

JUDGEMENT_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("candidate_index", pa.int64(), nullable=False),
            pa.field("judge_order", pa.int64(), nullable=False),  # 0 = judged first
            pa.field("agent_model", pa.string()),
            pa.field("reply", pa.string()),
            pa.field("action", ACTION_TYPE),
            pa.field("format_error", pa.bool_(), nullable=False),
            pa.field("attempts", pa.int64(), nullable=False),
            pa.field("similarities", pa.list_(pa.float64())),  # one per reference
            pa.field("aggregate", pa.float64()),
            pa.field("passed", pa.bool_(), nullable=False),
            pa.field("similarity", pa.string()),  # name of the similarity used
            pa.field("is_control", pa.bool_(), nullable=False),
            pa.field("gate_mode", pa.string(), nullable=False),  # generate | likelihood
            pa.field("scores", pa.list_(pa.float64())),  # likelihood: one per reference, nats
            *ROUND_FIELDS,
        ]
    ),
    "judgements",
)


@dataclass(frozen=True, slots=True)
class JudgementRecord:
    trajectory_id: str
    step_index: int
    candidate_index: int
    judge_order: int
    agent_model: str | None
    reply: str | None
    action: Action | None = nested(Action, default=None)
    format_error: bool = False
    attempts: int = 1
    similarities: list[float] = field(default_factory=list)
    aggregate: float = 0.0
    passed: bool = False
    similarity: str = "semantic"
    is_control: bool = False
    gate_mode: str = "generate"
    scores: list[float] | None = None
    round: int = 0
    prefix_mode: str = RAW_PREFIX


CONTROL_INDEX = -1
"""`candidate_index` (and `judge_order`) of the control row: no candidate has it."""
