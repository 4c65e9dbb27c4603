"""Published configs hold exactly the trainer keys of one TRL format, and documented columns."""

from __future__ import annotations

import pyarrow as pa
import pytest

from builder.errors import PublishError
from builder.publish.columns import COLUMNS, UNDOCUMENTED, column_doc
from builder.publish.shapes import TRAINER_KEYS, reshape, reshaped_schema
from schemas.candidates import CANDIDATE_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.supervision import SUPERVISION_SCHEMA

REAL = {"sft": SUPERVISION_SCHEMA, "preferences": PREFERENCE_SCHEMA, "candidates": CANDIDATE_SCHEMA}


@pytest.mark.parametrize("config", sorted(REAL))
def test_every_published_column_of_the_real_tables_is_documented(config: str) -> None:
    names = reshaped_schema(config, REAL[config]).names
    assert [n for n in names if column_doc(config, n) == UNDOCUMENTED] == []
    assert set(COLUMNS[config]) == set(names)  # and nothing documented that is not published


def test_trainer_keys_per_config() -> None:
    keys = {c: TRAINER_KEYS & set(reshaped_schema(c, s).names) for c, s in REAL.items()}
    assert keys == {
        "sft": {"messages"},
        "preferences": {"prompt", "chosen", "rejected"},
        "candidates": set(),
    }


def test_preference_rows_become_conversational_with_the_instructions() -> None:
    batch = pa.RecordBatch.from_pylist(
        [{"trajectory_id": "t", "system": "SYS", "prompt": "USER", "chosen": "C", "rejected": "R"}]
    )
    [row] = reshape("preferences", batch).to_pylist()
    assert row["prompt"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "USER"},
    ]
    assert row["chosen"] == [{"role": "assistant", "content": "C"}]
    assert row["rejected"] == [{"role": "assistant", "content": "R"}]
    assert (row["system_prompt"], row["user_prompt"]) == ("SYS", "USER")
    assert (row["chosen_target"], row["rejected_target"]) == ("C", "R")


def test_a_column_a_trainer_would_misread_is_refused() -> None:
    batch = pa.RecordBatch.from_pylist([{"trajectory_id": "t", "messages": [], "completion": "x"}])
    with pytest.raises(PublishError, match="completion"):
        reshape("sft", batch)
    with pytest.raises(PublishError, match="no chosen"):
        reshape("preferences", pa.RecordBatch.from_pylist([{"prompt": "p", "rejected": "r"}]))
