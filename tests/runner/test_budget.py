"""A run-wide token budget stops new work cleanly; raising it resumes where the run stopped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from tests.runner.nap_server import nap_server, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli", "run"]


def test_budget_stops_scheduling_and_a_bigger_budget_resumes(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 4)
    out = tmp_path / "out"
    config = tmp_path / "budget.yaml"
    with nap_server() as server:
        config.write_text(
            run_config(
                corpus, server.base_url, out, limits={"concurrency": 2, "budget_tokens": 20_000}
            )
        )
        stopped = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        assert "budget" in stopped.stderr.lower()
        assert "stopped early: budget" in stopped.stdout
        done_before = len(list((out / "_state" / "shards").glob("*.json")))
        assert done_before < 8  # the budget cut the run short
        sent = server.count

        # limits are not part of the config hash: the same run continues with a new budget
        raised = subprocess.run(
            [*CLI, str(config), "--set", "limits.budget_tokens=null"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert raised.returncode == 0, raised.stdout + raised.stderr
        assert f"({done_before} resumed, 0 failed)" in raised.stdout
        assert server.count > sent
    supervision = pl.read_parquet(out / "supervision" / "*.parquet")
    assert supervision["trajectory_id"].n_unique() == 8
