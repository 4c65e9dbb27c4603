"""Likelihood mode on the Ray engine: the scoring requests go through the coordinator's limits
(two actors share one in-flight bound at the server) and write what the local engine writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from builder.config import load_config
from builder.run.driver import run_pipeline
from tests.run.logprob_server import LogprobServer
from tests.run.nap_server import replicate_samples
from tests.run.ray.test_engine import RAY, write_config

LIKELY = {
    "gate": {"mode": "likelihood", "likelihood_api": "vllm"},
    "limits": {"concurrency": 2, "requests_per_minute": 100_000},
}
ROWS = ["trajectory_id", "step_index", "candidate_index", "rank", "target"]


def _usage(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "report.json").read_text())["usage"]["stages"]["likelihood"])


def test_likelihood_mode_on_ray_writes_the_local_engines_rows(
    tmp_path: Path, ray_cluster: str
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with LogprobServer(latency_s=0.05) as server:
        local = write_config(tmp_path, corpus, server.base_url, "local", **LIKELY)
        assert run_pipeline(load_config(local)).exit_code == 0
        sent_locally = len(server.requests)
        server.peak_in_flight = 0
        ray = write_config(tmp_path, corpus, server.base_url, "ray", execution=RAY, **LIKELY)
        result = run_pipeline(load_config(ray))
        sent_on_ray = len(server.requests) - sent_locally
        peak = server.peak_in_flight
    assert result.exit_code == 0 and result.shards_failed == 0, result.summary_text()
    frames = {
        name: pl.read_parquet(tmp_path / name / "supervision" / "*.parquet").sort(ROWS[:4])
        for name in ("local", "ray")
    }
    assert frames["local"].height > 0
    assert frames["ray"].select(ROWS).to_dicts() == frames["local"].select(ROWS).to_dicts()
    booked = {name: _usage(tmp_path / name) for name in ("local", "ray")}
    assert booked["ray"]["requests"] == booked["local"]["requests"] > 0
    # every call the server saw is booked: /tokenize ones too, on both engines
    assert booked["ray"]["http_requests"] == booked["local"]["http_requests"]
    assert sent_on_ray == sent_locally
    assert peak == 2  # both slots used, never a third: each actor alone would allow 2
