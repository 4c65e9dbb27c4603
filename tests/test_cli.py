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


def test_version_and_verbose_anywhere(capsys: pytest.CaptureFixture[str]) -> None:
    from builder import __version__
    from builder.cli import build_parser

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"nap-builder {__version__}"
    parser = build_parser()
    assert parser.parse_args(["-v", "status", "x"]).verbose is True
    assert parser.parse_args(["status", "x", "-v"]).verbose is True
    assert parser.parse_args(["status", "x"]).verbose is False


def test_run_help_states_resume_interrupts_exit_codes_and_yaml_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    for needle in ("Resume:", "Ctrl-C", "exit codes:", "130", "the value is YAML", "examples:"):
        assert needle in text
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert "(default: 0.5)" in capsys.readouterr().out  # --pass-rate


def test_status_and_inspect_refuse_a_folder_that_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", str(tmp_path)]) == 2
    assert "not a run folder (no config.hash)" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path)]) == 2
    assert "no trajectories or steps table here" in capsys.readouterr().err
    assert main(["status", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_inspect_lists_trajectories_with_instance_harness_and_step_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    source = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
    main(["ingest", str(source), "--out", str(tmp_path), "--workers", "1"])
    capsys.readouterr()
    assert main(["inspect", str(tmp_path), "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    raw = json.loads(source.read_text())["messages"]
    # mini-swe-agent's step rule read from the raw file: an assistant turn answered by a user
    # message (the observation)
    observations = sum(
        1
        for i, m in enumerate(raw[:-1])
        if m["role"] == "assistant" and raw[i + 1]["role"] == "user"
    )
    [row] = [line.split() for line in out[1:-1]]
    assert row[1] == "django__django-16255"
    assert row[2] == "mini-swe-agent" and int(row[3]) == observations > 0
    steps = pl.read_parquet(tmp_path / "steps" / "*.parquet")
    assert int(row[4]) == steps["eligible"].sum()
    assert out[-1] == "1 trajectories"


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
