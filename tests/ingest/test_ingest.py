"""Ingestion of every real sample file, the tables it writes, and the per-format summary."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import polars as pl
import pyarrow.parquet as pq
import pytest

from builder.ingest.parallel import InputSpec, format_summary, run_ingest
from schemas.quarantine import QUARANTINE_SCHEMA
from schemas.steps import STEP_SCHEMA
from schemas.trajectories import TRAJECTORY_SCHEMA
from tests.paths import SAMPLES, SHARED

# (trajectories, steps, eligible steps) per file at the default threshold (256 numbered tokens).
# Steps = observation messages by the step rule; eligible = single parseable action, a next
# action, and >= 256 cl100k tokens of the line-numbered payload. Counted independently of the
# adapters with small json/regex scripts over the raw files (mini-swe-agent: fenced blocks and
# <output> payloads; SWE-smith: <function= calls and OBSERVATION: payloads; OpenHands resolver:
# observation dicts, 1 + 19 of 3 + 21 observations over 256 tokens) and, for the event formats,
# by reading the files (ATIF: 4 of 5 tool results answer multi-call turns, the 5th is last;
# Claude Code and OpenHands v1: short observations only; in tool-call formats only tool results
# are observations, so the Stop-hook message after Claude Code's text-only turn is no step).
EXPECTED = {
    "atif-variant/trajectory.json": (1, 5, 0),
    "claude-code/hello-world-script/transcript.jsonl": (1, 2, 0),  # its 2 tool results
    "mini-swe-agent/django__django-16255/django__django-16255.traj.json": (1, 17, 2),
    "mini-swe-agent/github_issue.traj.json": (1, 10, 1),
    "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json": (
        1,
        5,
        1,
    ),
    "openhands-v0/basic.json": (1, 1, 0),
    "openhands-v0/resolver/output.jsonl": (2, 24, 20),
    "openhands-v1-sdk/events.jsonl": (1, 3, 0),
    "swe-agent/marshmallow-code__marshmallow-1867.traj": (1, 11, 3),
    "swe-agent/pydicom__pydicom-1458.traj": (1, 11, 2),
    "swe-smith-messages/ft_xml_example.jsonl": (3, 100, 56),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ingest")
    run_ingest([InputSpec(str(SHARED)), InputSpec(str(SAMPLES))], out, workers=2)
    return out


def _per_file(out: Path) -> dict[str, tuple[int, int, int]]:
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    trajs = pl.read_parquet(out / "trajectories" / "*.parquet").select(
        "trajectory_id", "source_path"
    )
    joined = trajs.join(steps, on="trajectory_id", how="left")
    grouped = joined.group_by("source_path").agg(
        pl.col("trajectory_id").n_unique(),
        pl.col("step_index").count(),
        pl.col("eligible").sum(),
    )
    return {
        str(Path(p).resolve().relative_to(SHARED.resolve())): (t, s, e)
        for p, t, s, e in grouped.iter_rows()
        if str(Path(p).resolve()).startswith(str(SHARED.resolve()))
    }


def test_every_shared_sample_file_ingests_with_hand_counted_numbers(corpus: Path) -> None:
    assert _per_file(corpus) == EXPECTED


def test_nothing_in_the_shared_samples_is_quarantined(corpus: Path) -> None:
    assert not list((corpus / "quarantine").glob("*.parquet"))


def test_tables_load_with_pyarrow_polars_and_datasets_with_declared_schemas(corpus: Path) -> None:
    for table, schema in (("trajectories", TRAJECTORY_SCHEMA), ("steps", STEP_SCHEMA)):
        files = sorted(str(p) for p in (corpus / table).glob("*.parquet"))
        arrow = pq.read_table(files)
        assert arrow.schema.equals(schema, check_metadata=False)
        assert arrow.schema.metadata[b"nap_builder.table"] == table.encode()
        frame = pl.read_parquet(files)
        assert frame.height == arrow.num_rows > 0
        loaded = datasets.load_dataset("parquet", data_files=files, split="train")
        assert loaded.num_rows == arrow.num_rows
        assert set(loaded.column_names) == set(schema.names)
    trajectories = pl.read_parquet(corpus / "trajectories" / "*.parquet")
    assert trajectories["trajectory_id"].n_unique() == trajectories.height == 16


def test_message_based_formats_keep_source_messages_exactly(corpus: Path) -> None:
    path = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
    source = json.loads(path.read_text())["messages"]
    trajs = pl.read_parquet(corpus / "trajectories" / "*.parquet")
    row = trajs.filter(pl.col("native_id") == "django__django-16255").row(0, named=True)
    assert [(m["role"], m["content"]) for m in row["messages"]] == [
        (m["role"], m["content"]) for m in source
    ]
    assert row["fidelity"] == "exact"
    assert row["resolved"] is True  # from the sibling report.json


def test_eligible_steps_have_tokens_a_next_action_and_one_action(corpus: Path) -> None:
    steps = pl.read_parquet(corpus / "steps" / "*.parquet").filter(pl.col("eligible"))
    assert steps.height > 0
    assert (steps["observation_numbered_tokens"] >= 256).all()
    assert (steps["observation_numbered_tokens"] >= steps["observation_tokens"]).all()
    assert steps["next_action"].is_not_null().all()
    assert (steps["num_actions"] == 1).all()
    assert steps["ineligible_reason"].is_null().all()


def test_summary_table_counts_per_format(corpus: Path, tmp_path: Path) -> None:
    summary = run_ingest([InputSpec(str(SHARED / "swe-agent"))], tmp_path, workers=1)
    text = format_summary(summary)
    assert summary.by_format["swe-agent"].files == 2
    assert summary.by_format["swe-agent"].trajectories == 2
    assert summary.by_format["swe-agent"].steps == 22
    assert summary.by_format["swe-agent"].eligible == 5
    assert "swe-agent" in text and "TOTAL" in text


def test_forced_format_overrides_detection(tmp_path: Path) -> None:
    path = SHARED / "mini-swe-agent/github_issue.traj.json"
    summary = run_ingest([InputSpec(str(path), "mini-swe-agent")], tmp_path, workers=1)
    assert summary.by_format["mini-swe-agent"].trajectories == 1
    wrong = run_ingest([InputSpec(str(path), "claude-code")], tmp_path / "wrong", workers=1)
    assert wrong.total.trajectories == 0
    assert wrong.total.quarantined >= 1


def test_quarantine_schema_is_declared() -> None:
    assert QUARANTINE_SCHEMA.names[:4] == [
        "source_path",
        "record_index",
        "source_format",
        "error_kind",
    ]
