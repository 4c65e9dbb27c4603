"""A shard worker process killed mid-run: Ray restarts the actor and retries its shards, and
the tables equal those of an uninterrupted local run."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

from builder.config import load_config
from builder.run.driver import run_pipeline
from builder.run.result import RunResult
from tests.run.nap_server import nap_server, replicate_samples
from tests.run.ray.test_engine import RAY, tables, write_config


def test_a_worker_killed_mid_run_still_ends_with_identical_tables(
    tmp_path: Path, ray_cluster: str
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 3)  # 6 shards
    with nap_server(latency_s=0.1) as server:
        local = write_config(tmp_path, corpus, server.base_url, "local")
        assert run_pipeline(load_config(local)).exit_code == 0
        config = load_config(
            write_config(
                tmp_path,
                corpus,
                server.base_url,
                "ray",
                execution={**RAY, "lease_s": 5},
                limits={"concurrency": 4},
            )
        )
        out = tmp_path / "ray"
        outcome: list[RunResult | BaseException] = []

        def run() -> None:
            try:
                outcome.append(run_pipeline(config))
            except BaseException as exc:  # surfaced by the assertion below
                outcome.append(exc)

        thread = threading.Thread(target=run)
        before = server.count
        thread.start()
        workers = out / "_state" / "workers"
        deadline = time.monotonic() + 120
        while server.count < before + 8 or len(list(workers.glob("*.json"))) < 2:
            assert thread.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.02)
        done_at_kill = len(list((out / "_state" / "shards").glob("*.json")))
        victim = json.loads(sorted(workers.glob("*.json"))[0].read_text())["pid"]
        os.kill(victim, signal.SIGKILL)
        thread.join(timeout=300)
        assert not thread.is_alive()
    result = outcome[0]
    assert isinstance(result, RunResult), result
    assert done_at_kill < 6  # the kill happened with shards still to do
    assert result.exit_code == 0 and result.shards_done == 6, result.summary_text()
    assert len(list(workers.glob("*.json"))) >= 3  # the killed actor was restarted
    assert tables(out) == tables(tmp_path / "local")
