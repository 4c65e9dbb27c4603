"""`preferences` table: (prompt, chosen, rejected) from passing vs failing candidates of a step."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import RAW_PREFIX, ROUND_FIELDS, with_version

PREFERENCE_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("chosen_candidate_index", pa.int64(), nullable=False),
            pa.field("rejected_candidate_index", pa.int64(), nullable=False),
            pa.field("system", pa.string()),
            pa.field("prompt", pa.string()),
            pa.field("chosen", pa.string()),
            pa.field("rejected", pa.string()),
            pa.field("chosen_similarity", pa.float64()),
            pa.field("rejected_similarity", pa.float64()),
            pa.field("prompt_version", pa.string()),
            *ROUND_FIELDS,
        ]
    ),
    "preferences",
)


@dataclass(frozen=True, slots=True)
class PreferenceRecord:
    trajectory_id: str
    step_index: int
    chosen_candidate_index: int
    rejected_candidate_index: int
    system: str
    prompt: str
    chosen: str
    rejected: str
    chosen_similarity: float | None
    rejected_similarity: float | None
    prompt_version: str
    round: int = 0
    prefix_mode: str = RAW_PREFIX
