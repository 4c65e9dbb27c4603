"""The command line: ingest prints the per-format summary, inspect shows a trajectory."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from builder.cli import main
from tests.paths import SHARED


def test_ingest_prints_the_summary_and_inspect_shows_each_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = SHARED / "mini-swe-agent/github_issue.traj.json"
    assert main(["ingest", str(source), "--out", str(tmp_path), "--workers", "1"]) == 0
    summary = capsys.readouterr().out
    assert "mini-swe-agent" in summary and "TOTAL" in summary
    row = next(line.split() for line in summary.splitlines() if line.startswith("mini-swe-agent"))
    assert row[1:] == [
        "1",
        "1",
        "10",
        "1",
        "0",
        "0",
        "0",
    ]  # files, trajectories, steps, eligible, quarantined, duplicates, excluded

    trajectory = pl.read_parquet(tmp_path / "trajectories" / "*.parquet")["trajectory_id"][0]
    assert main(["inspect", str(tmp_path), "--trajectory", trajectory[:8], "--lines", "2"]) == 0
    shown = capsys.readouterr().out
    assert f"trajectory {trajectory}  (10 steps, 1 eligible)" in shown
    assert "step 1  [eligible]" in shown and "action: ls -la" in shown
    assert "not eligible: below_threshold" in shown and "not eligible: last_step" in shown
    assert "| total 44" in shown  # the observation head


def test_inspect_names_a_missing_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = SHARED / "mini-swe-agent/github_issue.traj.json"
    main(["ingest", str(source), "--out", str(tmp_path), "--workers", "1"])
    assert main(["inspect", str(tmp_path), "--trajectory", "zzzz"]) == 2
    assert "no trajectory with id starting 'zzzz'" in capsys.readouterr().err


def test_a_config_error_names_the_key_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("inputs: [{path: x}]\ngate: {similarity: fuzzy}\n")
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "gate.similarity" in err and "semantic" in err


def test_ingest_excludes_instances_by_set_file_or_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = tmp_path / "held_out.txt"
    ids.write_text("github_issue\n")
    source = str(SHARED / "mini-swe-agent")
    argv = ["ingest", source, "--out", str(tmp_path / "o"), "--workers", "1"]
    assert (
        main([*argv, "--exclude-instances", "swe-bench-verified", "--exclude-instances", str(ids)])
        == 1
    )
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("TOTAL"))
    assert total.split()[2] == "0" and total.split()[-1] == "2"  # both trajectories excluded
    assert main([*argv, "--exclude-instances", "django__django-16255"]) == 0
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("TOTAL"))
    assert total.split()[2] == "1" and total.split()[-1] == "1"
    assert main([*argv, "--exclude-instances", "two words"]) == 2
    assert "--exclude-instances: " in capsys.readouterr().err
