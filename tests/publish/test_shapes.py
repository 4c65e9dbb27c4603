"""Published configs hold exactly the trainer keys of one TRL format, and documented columns."""

from __future__ import annotations

import pyarrow as pa
import pytest

from builder.errors import PublishError
from builder.publish.columns import COLUMNS, UNDOCUMENTED, column_doc
from builder.publish.config_rows import published_names
from builder.publish.provenance import provenance_fields
from builder.publish.shapes import TRAINER_KEYS, reshape, reshaped_schema
from schemas.candidates import CANDIDATE_SCHEMA
from schemas.preferences import PREFERENCE_SCHEMA
from schemas.supervision import SUPERVISION_SCHEMA

REAL = {
    "prompt_completion": SUPERVISION_SCHEMA,
    "sft": SUPERVISION_SCHEMA,
    "preferences": PREFERENCE_SCHEMA,
    "candidates": CANDIDATE_SCHEMA,
}
PROVENANCE = {
    "instance_id",
    "harness",
    "source_format",
    "source_file",
    "record_index",
    "trajectory_model",
    "teacher_model",
    "agent_model",
    "gate_mode",
    "gate_threshold",
}


@pytest.mark.parametrize("config", sorted(REAL))
def test_every_published_column_of_the_real_tables_is_documented(config: str) -> None:
    names = published_names(config, REAL[config])
    assert [n for n in names if column_doc(config, n) == UNDOCUMENTED] == []
    assert set(COLUMNS[config]) == set(names)  # and nothing documented that is not published
    assert len(names) == len(set(names))


@pytest.mark.parametrize("config", sorted(REAL))
def test_every_config_carries_the_provenance_columns(config: str) -> None:
    names = set(published_names(config, REAL[config]))
    assert names >= PROVENANCE
    assert {n for n, _ in provenance_fields(config)} <= names
    if config == "candidates":  # the gate's verdict of each judged candidate
        assert {"similarity", "passed"} <= names


def test_trainer_keys_per_config() -> None:
    keys = {c: TRAINER_KEYS & set(reshaped_schema(c, s).names) for c, s in REAL.items()}
    assert keys == {
        "prompt_completion": {"prompt", "completion"},
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


def test_a_source_file_is_named_relative_to_its_input_never_by_a_local_path() -> None:
    from pathlib import Path

    from builder.publish.provenance import relative_source

    roots = [Path("/data/runs"), Path("/data/one.jsonl")]
    assert relative_source("/data/runs/a/b.traj", roots) == "runs/a/b.traj"
    assert relative_source("/data/one.jsonl", roots) == "one.jsonl"
    assert relative_source("/cache/inputs/3f/x.jsonl", roots) == "x.jsonl"  # e.g. an s3 copy
    assert relative_source("SWE-Gym/OpenHands-SFT-Trajectories", roots) == (
        "SWE-Gym/OpenHands-SFT-Trajectories"
    )  # a Hub id is kept
    assert relative_source(None, roots) is None
