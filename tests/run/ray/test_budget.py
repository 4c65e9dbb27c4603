"""The budget ledger is one for the cluster: two actors stop at the limit together, the
coordinator writes OUT/_state/budget.json, and a raised limit resumes the run."""

from __future__ import annotations

import json
from pathlib import Path

from builder.config import load_config
from builder.run.driver import run_pipeline
from tests.run.nap_server import nap_server, replicate_samples
from tests.run.ray.test_engine import RAY, write_config

LIMIT = 20_000
CONCURRENCY = 2


def test_a_token_budget_stops_both_workers_and_a_raised_one_resumes(
    tmp_path: Path, ray_cluster: str
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 4)  # 8 shards
    out = tmp_path / "budget"
    with nap_server() as server:
        limits = {"concurrency": CONCURRENCY, "budget_tokens": LIMIT}
        path = write_config(
            tmp_path, corpus, server.base_url, "budget", execution=RAY, limits=limits
        )
        stopped = run_pipeline(load_config(path))
        assert stopped.stopped == "budget" and stopped.exit_code == 3, stopped.summary_text()
        done_before = len(list((out / "_state" / "shards").glob("*.json")))
        assert done_before < 8
        ledger = json.loads((out / "_state" / "budget.json").read_text())
        # the bound of the ray engine: the limit plus the requests granted in flight at
        # once, each at most a teacher request (4 samples x 1024 tokens + its prompt)
        assert 0 < ledger["spent_tokens"] <= LIMIT + CONCURRENCY * 8_000
        assert ledger["refused_requests"] >= 1
        raised = load_config(path)
        raised.limits.budget_tokens = None
        done = run_pipeline(raised)
    assert done.exit_code == 0, done.summary_text()
    assert (done.shards_skipped, done.shards_done) == (done_before, 8 - done_before)
