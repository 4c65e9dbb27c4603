"""`ingest --hf-dataset ID[:SPLIT] --column ROLE=NAME` and `hf_dataset` inputs, on local Parquet
copies rebuilt in two Hub layouts from real rows: SWE-smith-trajectories (`messages` as JSON
text, from the SWE-smith sample) and nebius SWE-rebench-openhands-trajectories (`trajectory`
with OpenAI tool calls, `tools`, `resolved` as 0/1, from the OpenHands LLM-log sample)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.config import PipelineConfig
from builder.errors import ConfigError
from builder.ingest.hub_inputs import dataset_options, parse_columns, preset_by_columns, split_ref
from tests.paths import SHARED

SWE_SMITH = SHARED / "swe-smith-messages" / "ft_xml_example.jsonl"
LLM_LOG = next((SHARED / "openhands-llm-log").glob("*.json"))


def swe_smith_rows() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SWE_SMITH.read_text().splitlines() if line.strip()]
    return [
        {
            "messages": json.dumps(r["messages"]),
            "instance_id": r["instance_id"],
            "resolved": i % 2 == 0,
            "model": "claude-3-7-sonnet-20250219",
            "traj_id": f"{r['instance_id']}.t{i}",
            "patch": "",
        }
        for i, r in enumerate(rows)
    ]


def rebench_rows() -> list[dict[str, Any]]:
    log = json.loads(LLM_LOG.read_text())
    messages = [*log["messages"], log["response"]["choices"][0]["message"]]
    trajectory = []
    for m in messages:
        content = m.get("content")
        text = (
            content
            if isinstance(content, str)
            else "\n".join(p.get("text", "") for p in content or [])
        )
        trajectory.append(
            {
                "role": m["role"],
                "content": text,
                "tool_calls": m.get("tool_calls"),
                "name": m.get("name"),
                "tool_call_id": m.get("tool_call_id"),
            }
        )

    def task(i: int) -> list[dict[str, Any]]:  # two runs of one task, so not duplicates
        first = next(n for n, m in enumerate(trajectory) if m["role"] == "user")
        return [
            {**m, "content": m["content"] + f" (run {i})"} if n == first else m
            for n, m in enumerate(trajectory)
        ]

    return [
        {
            "trajectory_id": f"chatcmpl-{i}",
            "instance_id": f"owner__repo-{i}",
            "repo": "owner/repo",
            "trajectory": task(i),
            "tools": log["tools"],
            "model_patch": "",
            "exit_status": "submit",
            "resolved": i,
            "gen_tests_correct": None,
            "pred_passes_gen_tests": None,
        }
        for i in (0, 1)
    ]


def hub_copy(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """A local copy in the Hub's file layout: data/train-00000-of-00001.parquet."""
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "train-00000-of-00001.parquet")
    return folder


def test_ingest_reads_local_copies_of_both_hub_layouts(tmp_path: Path) -> None:
    smith = hub_copy(tmp_path / "swe-smith", swe_smith_rows())
    rebench = hub_copy(tmp_path / "rebench", rebench_rows())
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "builder.cli",
            "ingest",
            "--hf-dataset",
            f"{smith}:train",
            "--hf-dataset",
            str(rebench),
            "--out",
            str(out),
            "--min-tokens",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    by_source = trajectories.group_by("source_path").len().sort("source_path")
    assert by_source["len"].to_list() == [2, 3]
    smith_rows, rebench_input = swe_smith_rows(), rebench_rows()
    mine = trajectories.filter(pl.col("native_id").str.starts_with("owner__")).sort("native_id")
    assert mine["resolved"].to_list() == [False, True]  # 0/1 read as a flag
    assert all(json.loads(t) == rebench_input[0]["tools"] for t in mine["tools"].to_list())
    smith_rec = trajectories.filter(~pl.col("native_id").str.starts_with("owner__"))
    assert sorted(smith_rec["native_id"].to_list()) == sorted(r["instance_id"] for r in smith_rows)
    assert set(smith_rec["agent_model"].to_list()) == {"claude-3-7-sonnet-20250219"}  # preset
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    ids = mine["trajectory_id"].to_list()
    tool_messages = sum(m["role"] == "tool" for m in rebench_input[0]["trajectory"])
    assert steps.filter(pl.col("trajectory_id").is_in(ids)).height == 2 * tool_messages
    assert set(steps.filter(pl.col("trajectory_id").is_in(ids))["tool_schemas"]) == {"recorded"}
    chats = [json.loads(r["messages"]) for r in smith_rows]  # text replies: a user turn answers
    observations = sum(  # each assistant turn (observations and format-error feedback alike)
        a["role"] == "assistant" and b["role"] == "user"
        for chat in chats
        for a, b in itertools.pairwise(chat)
    )
    assert steps.height - 2 * tool_messages == observations


def test_columns_given_by_hand_map_any_layout(tmp_path: Path) -> None:
    rows = [{"task": r["instance_id"], "chat": r["messages"], "ok": 1} for r in swe_smith_rows()]
    folder = hub_copy(tmp_path / "renamed", rows)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "builder.cli",
            "ingest",
            "--hf-dataset",
            str(folder),
            "--column",
            "messages=chat",
            "--column",
            "id=task",
            "--column",
            "resolved=ok",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    table = pl.read_parquet(out / "trajectories" / "*.parquet")
    assert sorted(table["native_id"].to_list()) == sorted(r["task"] for r in rows)
    assert table["resolved"].to_list() == [True] * 3


def test_bad_column_roles_and_presets_are_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match="roles: messages, id, model"):
        parse_columns(["conversation=chat"])
    with pytest.raises(ConfigError, match="ROLE=NAME"):
        parse_columns(["messages"])
    with pytest.raises(ConfigError, match="presets: swe-smith"):
        dataset_options("x/y", None, {}, "nope")
    done = subprocess.run(
        [sys.executable, "-m", "builder.cli", "ingest", "--column", "messages=x", "--out", "o"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--column and --preset go with --hf-dataset" in done.stderr


def test_references_presets_and_split() -> None:
    assert split_ref("nebius/SWE-rebench-openhands-trajectories:train") == (
        "nebius/SWE-rebench-openhands-trajectories",
        "train",
    )
    assert split_ref("./copies/smith") == ("./copies/smith", None)
    options = dataset_options(
        "NEBIUS/swe-rebench-openhands-trajectories", "train", {"model": "m"}, None
    )
    assert options == {
        "messages": "trajectory",
        "id": "instance_id",
        "resolved": "resolved",
        "tools": "tools",
        "preset": "swe-rebench-openhands",
        "model": "m",
        "split": "train",
    }
    assert preset_by_columns(rebench_rows()[0]).name == "swe-rebench-openhands"
    assert preset_by_columns({"messages", "instance_id"}) is None


def test_a_pipeline_input_names_a_hub_dataset_the_same_way(tmp_path: Path) -> None:
    config = PipelineConfig.model_validate(
        {
            "inputs": [
                {"hf_dataset": "SWE-bench/SWE-smith-trajectories:tool", "columns": {"model": "m"}}
            ]
        }
    )
    (spec,) = config.inputs
    assert (spec.path, spec.format) == ("SWE-bench/SWE-smith-trajectories", "hf-dataset")
    assert spec.options["split"] == "tool" and spec.options["model"] == "m"
    assert spec.options["preset"] == "swe-smith"
    with pytest.raises(ValueError, match="unknown column role"):
        PipelineConfig.model_validate({"inputs": [{"hf_dataset": "a/b", "columns": {"x": "y"}}]})
    with pytest.raises(ValueError, match="not both"):
        PipelineConfig.model_validate({"inputs": [{"hf_dataset": "a/b", "path": "c"}]})
