"""A run-wide token budget stops new work cleanly; raising it resumes where the run stopped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.run.nap_server import nap_server, replicate_samples, run_config

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


PRICES = {
    "fake-teacher": {"input": 1000.0, "cached_input": 100.0, "output": 10.0},
    "fake-agent": {"input": 1000.0, "cached_input": 100.0, "output": 10.0},
}


def billed(bodies: list[dict]) -> float:
    """What the scripted server's reported usage costs at PRICES, recomputed from the request
    bodies it received (its usage: prompt = characters / 4, half cached, 3 tokens a choice)."""
    total = 0.0
    for body in bodies:
        price = PRICES[body["model"]]
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
        cached = prompt // 2
        completion = 3 * int(body.get("n") or 1)
        total += (prompt - cached) * price["input"] + cached * price["cached_input"]
        total += completion * price["output"]
    return total / 1e6


def test_a_usd_budget_holds_across_reruns_and_raising_it_resumes(tmp_path: Path) -> None:
    import json

    corpus = replicate_samples(tmp_path / "corpus", 4)
    with nap_server() as server:
        full = tmp_path / "full.yaml"
        full.write_text(run_config(corpus, server.base_url, tmp_path / "full", prices=PRICES))
        whole = subprocess.run([*CLI, str(full)], capture_output=True, text=True, timeout=300)
        assert whole.returncode == 0, whole.stdout + whole.stderr
        cost = billed(server.requests)
        assert cost > 0
        before = server.count

        out = tmp_path / "out"
        budget = round(cost / 3, 6)
        config = tmp_path / "budget.yaml"
        config.write_text(
            run_config(
                corpus,
                server.base_url,
                out,
                prices=PRICES,
                limits={"concurrency": 8, "budget_usd": budget},
            )
        )
        stopped = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        assert "limits.budget_usd" in stopped.stderr
        spent = billed(server.requests[before:])
        ledger = json.loads((out / "_state" / "budget.json").read_text())
        assert 0 < spent <= budget + ledger["largest_reservation_usd"]
        assert ledger["spent_usd"] == pytest.approx(spent, rel=1e-6)
        report = json.loads((out / "report.json").read_text())
        assert report["budget"]["spent_usd"] == pytest.approx(spent, rel=1e-6)

        sent = server.count  # the same command again: nothing more is spent
        again = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
        assert again.returncode == 3, again.stdout + again.stderr
        assert server.count == sent

        raised = subprocess.run(
            [*CLI, str(config), "--set", f"limits.budget_usd={cost * 10}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert raised.returncode == 0, raised.stdout + raised.stderr
        assert server.count > sent
    supervision = pl.read_parquet(out / "supervision" / "*.parquet")
    assert supervision["trajectory_id"].n_unique() == 8
