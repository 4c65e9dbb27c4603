"""`round_steps` table: one row per eligible step of a run, saying in which context it was
judged (the round, the prefix mode, the prefix compressor and how many earlier observations it
replaced) and what came of it; for a deployed run, whether the deployed compression of the
step passed the gate (the deployed compressor's per-step NAP verdict).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import ROUND_FIELDS, nested, with_version
from schemas.steps import ACTION_TYPE, Action

ROUND_STEP_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            *ROUND_FIELDS,
            pa.field("prefix_compressor", pa.string()),  # compressor_id; null unless compressed
            # earlier observations shown otherwise than raw (compressed, or as deployed)
            pa.field("prefix_replaced", pa.int64(), nullable=False),
            pa.field("processed", pa.bool_(), nullable=False),  # references and gate were run
            pa.field("dropped", pa.string()),  # why the step gave no supervision, if it gave none
            pa.field("supervision_rows", pa.int64(), nullable=False),
            # deployed runs: did the deployed compressor change this step, and did its output
            # pass the gate (null: not a deployed step, or not judged)
            pa.field("deployed_changed", pa.bool_()),
            pa.field("deployed_passed", pa.bool_()),
            pa.field("deployed_score", pa.float64()),
            pa.field("deployed_action", ACTION_TYPE),  # the agent's action with it in place
        ]
    ),
    "round_steps",
)


@dataclass(frozen=True, slots=True)
class RoundStepRecord:
    trajectory_id: str
    step_index: int
    round: int
    prefix_mode: str
    prefix_compressor: str | None
    prefix_replaced: int
    processed: bool
    dropped: str | None
    supervision_rows: int
    deployed_changed: bool | None = None
    deployed_passed: bool | None = None
    deployed_score: float | None = None
    deployed_action: Action | None = nested(Action, default=None)
