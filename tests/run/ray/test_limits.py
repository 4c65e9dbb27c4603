"""Cluster-wide limits: two shard actors share one in-flight bound and one RPM bucket,
measured at the scripted server over real HTTP."""

from __future__ import annotations

from pathlib import Path

from builder.config import load_config
from builder.run.driver import run_pipeline
from tests.run.nap_server import nap_server, replicate_samples
from tests.run.ray.test_engine import RAY, write_config


def test_concurrency_and_rpm_hold_across_two_workers(tmp_path: Path, ray_cluster: str) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)  # 2 shards, one per actor
    rpm = 240  # 4 per second, a bucket of 4
    with nap_server(latency_s=0.15) as server:
        config = write_config(
            tmp_path,
            corpus,
            server.base_url,
            "limited",
            execution=RAY,
            limits={"concurrency": 2, "requests_per_minute": rpm},
            references={"samples": 1},
        )
        result = run_pipeline(load_config(config))
        starts = sorted(start for start, _ in server.intervals)
        peak = server.peak_in_flight
    assert result.exit_code == 0 and result.shards_done == 2, result.summary_text()
    workers = list((tmp_path / "limited" / "_state" / "workers").glob("*.json"))
    assert len(workers) == 2
    assert peak == 2  # both slots used, never a third: each actor alone would allow 2
    rate, burst = rpm / 60, rpm / 60
    n = len(starts)
    assert n >= 16
    # A token bucket lets at most burst + rate * t requests start within t seconds. Arrival
    # at the server trails the grant by the client's send path (a loaded 2-core machine
    # bunches a few), so windows of a second and more are checked, with a slack of 2.
    # Each actor with its own bucket would double the rate and fail this by far.
    for i in range(n):
        for j in range(i + 1, n):
            if starts[j] - starts[i] >= 1.0:
                assert j - i + 1 <= burst + rate * (starts[j] - starts[i]) + 2, (i, j)
    assert n <= burst + rate * (starts[-1] - starts[0]) + 2
