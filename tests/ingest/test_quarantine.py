"""Broken inputs become quarantine rows with a clear message; everything valid still lands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from builder.cli import main
from tests.paths import SHARED

MINI = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
SMITH = SHARED / "swe-smith-messages/ft_xml_example.jsonl"


def _mini_with_observation(payload: str) -> dict:
    doc = json.loads(MINI.read_text())
    doc["instance_id"] = "patched"
    doc["messages"][3]["content"] = f"<returncode>0</returncode>\n<output>\n{payload}\n</output>"
    return doc


@pytest.fixture()
def broken_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    good = root / "good"
    shutil.copytree(SHARED / "swe-agent", good / "swe-agent")  # a mixed-format directory:
    shutil.copy(MINI, good / "mini.traj.json")  # mini-swe-agent beside SWE-agent files
    (root / "truncated.json").write_text(MINI.read_text()[:5000])
    (root / "empty.json").write_text("")
    (root / "latin1.jsonl").write_bytes(
        '{"messages": [{"role": "user", "content": "caf\xe9"}]}\n'.encode("latin-1")
    )
    (root / "unknown.json").write_text(json.dumps({"hello": "world", "items": [1, 2, 3]}))
    (root / "scalar.json").write_text("42")
    lines = SMITH.read_text().splitlines()
    (root / "mixed_lines.jsonl").write_text(
        "\n".join(
            [
                lines[0],
                '{"messages": [{"role": "user", "content": "trunc',
                lines[1],
                json.dumps({"instance_id": "x", "messages": "not a list"}),
            ]
        )
        + "\n"
    )
    (root / "wrong_shape.traj.json").write_text(
        json.dumps(
            {"trajectory_format": "mini-swe-agent-1", "messages": {"role": "user"}, "info": {}}
        )
    )
    (root / "huge.traj.json").write_text(json.dumps(_mini_with_observation("x" * 50_000_000)))
    (root / "binary.traj.json").write_text(
        json.dumps(_mini_with_observation("\x00\x01\x02\x03ELF" * 2000))
    )
    return root


def _quarantine(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "quarantine" / "*.parquet")


def test_each_kind_of_broken_input_is_quarantined_and_valid_data_survives(
    broken_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "out"
    missing = str(tmp_path / "no-such-dir" / "x.json")
    code = main(["ingest", str(broken_corpus), missing, "--out", str(out), "--workers", "1"])
    assert code == 0  # valid data was found and --strict is off
    rows = _quarantine(out)
    by_file = {(Path(r["source_path"]).name, r["error_kind"]) for r in rows.iter_rows(named=True)}
    assert ("truncated.json", "invalid_json") in by_file
    assert ("empty.json", "empty") in by_file
    assert ("latin1.jsonl", "encoding") in by_file
    assert ("unknown.json", "unknown_format") in by_file
    assert ("scalar.json", "unknown_format") in by_file
    assert ("wrong_shape.traj.json", "wrong_shape") in by_file
    assert ("huge.traj.json", "oversized_observation") in by_file
    assert ("x.json", "missing") in by_file
    mixed = rows.filter(pl.col("source_path").str.ends_with("mixed_lines.jsonl"))
    assert sorted(mixed["record_index"].to_list()) == [1, 3]  # the two bad lines, by index
    for message in rows["message"]:
        assert message  # every row says why
    unknown = rows.filter(pl.col("error_kind") == "unknown_format")["message"][0]
    assert "--format" in unknown and "mini-swe-agent" in unknown and "claude-code" in unknown

    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    names = {Path(p).name for p in trajectories["source_path"]}
    # the good files, the good lines of the mixed file, and the huge / binary trajectories
    assert {
        "mini.traj.json",
        "marshmallow-code__marshmallow-1867.traj",
        "pydicom__pydicom-1458.traj",
        "mixed_lines.jsonl",
        "huge.traj.json",
        "binary.traj.json",
    } <= names
    assert trajectories.filter(pl.col("source_path").str.ends_with("mixed_lines.jsonl")).height == 2

    steps = pl.read_parquet(out / "steps" / "*.parquet")
    reasons = dict(
        zip(
            trajectories["trajectory_id"],
            [Path(p).name for p in trajectories["source_path"]],
            strict=True,
        )
    )
    first_steps = steps.filter(pl.col("step_index") == 0).with_columns(
        pl.col("trajectory_id").replace_strict(reasons, default=None).alias("file")
    )
    reason_of = dict(zip(first_steps["file"], first_steps["ineligible_reason"], strict=True))
    assert reason_of["huge.traj.json"] == "observation_too_large"
    assert reason_of["binary.traj.json"] == "binary_observation"
    assert "quarantined" in caplog.text and "truncated.json" in caplog.text


def test_strict_mode_fails_when_anything_is_quarantined(
    broken_corpus: Path, tmp_path: Path
) -> None:
    code = main(
        [
            "ingest",
            str(broken_corpus / "empty.json"),
            str(MINI),
            "--out",
            str(tmp_path / "o"),
            "--strict",
            "--workers",
            "1",
        ]
    )
    assert code == 1


def test_exit_code_is_nonzero_when_nothing_valid_was_found(
    broken_corpus: Path, tmp_path: Path
) -> None:
    code = main(["ingest", str(broken_corpus / "unknown.json"), "--out", str(tmp_path / "o")])
    assert code == 1
    assert _quarantine(tmp_path / "o").height == 1
