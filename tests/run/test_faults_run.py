"""Transient endpoint faults during a run are retried: the tables equal a fault-free run's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from tests.llm.servers import FakeAPIServer, Fault, status
from tests.run.nap_server import nap_server, nap_text, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli", "run"]
TABLES = {
    "candidates": ["trajectory_id", "step_index", "candidate_index"],
    "judgements": ["trajectory_id", "step_index", "candidate_index"],
    "supervision": ["trajectory_id", "step_index", "rank"],
}


def _run(corpus: Path, server: FakeAPIServer, out: Path) -> dict[str, list[dict]]:
    config = out.with_suffix(".yaml")
    config.write_text(run_config(corpus, server.base_url, out, limits={"timeout_s": 2}))
    done = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return {t: pl.read_parquet(out / t / "*.parquet").sort(k).to_dicts() for t, k in TABLES.items()}


def test_429_500_drops_and_timeouts_mid_run_change_nothing(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 2)
    with nap_server() as clean:
        expected = _run(corpus, clean, tmp_path / "clean")
    faults = [
        status(429, retry_after="0"),
        status(500),
        status(503),
        Fault("drop"),
        Fault("slow", delay_s=3.0),  # past the 2 s timeout
        Fault("truncate"),
        status(429, retry_after="0"),
    ]
    with FakeAPIServer(api="openai", faults=faults, text=nap_text) as faulty:
        got = _run(corpus, faulty, tmp_path / "faulty")
        assert faulty.count > clean.count  # the faults really happened and were retried
    assert got == expected
