"""`references` table: the agent's next action(s) on the raw observation."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import RAW_PREFIX, ROUND_FIELDS, nested, with_version
from schemas.steps import ACTION_TYPE, Action

REFERENCE_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("reference_index", pa.int64(), nullable=False),
            pa.field("mode", pa.string(), nullable=False),  # sampled | logged
            pa.field("agent_model", pa.string()),
            pa.field("reply", pa.string()),
            pa.field("action", ACTION_TYPE),
            pa.field("format_error", pa.bool_(), nullable=False),
            pa.field("attempts", pa.int64(), nullable=False),
            pa.field("similarity_to_logged", pa.float64()),
            *ROUND_FIELDS,
        ]
    ),
    "references",
)


@dataclass(frozen=True, slots=True)
class ReferenceRecord:
    trajectory_id: str
    step_index: int
    reference_index: int
    mode: str
    agent_model: str | None
    reply: str | None
    action: Action | None = nested(Action, default=None)
    format_error: bool = False
    attempts: int = 1
    similarity_to_logged: float | None = None
    round: int = 0
    prefix_mode: str = RAW_PREFIX
