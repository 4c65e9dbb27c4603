"""engine=ray writes what engine=local writes: same rows, same markers, resumable across engines.

Both engines run the real pipeline against a scripted OpenAI-compatible server over real HTTP
on the project's samples; Ray is a local 2-CPU Ray with two shard actors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from builder.config import load_config
from builder.run.driver import run_pipeline
from builder.run.shards import NAP_TABLES
from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import nap_server, replicate_samples, run_config
from tests.run.test_resume import KEYS

CLI = [sys.executable, "-m", "builder.cli"]
RAY = {"engine": "ray", "actors": 2, "shards_per_actor": 2, "actor_cpus": 0.5}


def write_config(tmp: Path, corpus: Path, url: str, name: str, **extra: Any) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(run_config(corpus, url, tmp / name, **extra))
    return path


def tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    found = {}
    for table in (*NAP_TABLES, "trajectories", "steps"):
        frame = pl.read_parquet(out / table / "*.parquet").sort(KEYS[table])
        found[table] = frame.to_dicts()
    return found


def markers(out: Path) -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in (out / "_state" / "shards").glob("*")}


@pytest.fixture(scope="module")
def server() -> FakeAPIServer:
    with nap_server(latency_s=0.02) as srv:
        yield srv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return replicate_samples(tmp_path_factory.mktemp("corpus"), 2)  # 4 trajectories, 4 shards


@pytest.fixture(scope="module")
def local_run(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, server: FakeAPIServer
) -> Path:
    tmp = tmp_path_factory.mktemp("local")
    result = run_pipeline(load_config(write_config(tmp, corpus, server.base_url, "local")))
    assert result.exit_code == 0 and result.shards_done == 4
    return tmp / "local"


def test_ray_engine_writes_the_rows_and_markers_of_the_local_engine(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, local_run: Path, ray_cluster: str
) -> None:
    config = write_config(tmp_path, corpus, server.base_url, "ray", execution=RAY)
    result = run_pipeline(load_config(config))
    assert result.exit_code == 0, result.summary_text()
    assert (result.shards_done, result.shards_failed) == (4, 0)
    expected = tables(local_run)
    assert expected["supervision"] and expected["preferences"] and expected["judgements"]
    assert tables(tmp_path / "ray") == expected
    assert markers(tmp_path / "ray") == markers(local_run)
    ray_report = json.loads((tmp_path / "ray" / "report.json").read_text())
    local_report = json.loads((local_run / "report.json").read_text())
    assert ray_report["totals"] == local_report["totals"]
    workers = list((tmp_path / "ray" / "_state" / "workers").glob("*.json"))
    assert 1 <= len(workers) <= 2  # the pool's actors (a tiny job may finish on the first)


def test_a_run_finished_locally_is_complete_on_ray_and_a_ray_run_resumes_locally(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, local_run: Path, ray_cluster: str
) -> None:
    out = tmp_path / "both"
    config = load_config(write_config(tmp_path, corpus, server.base_url, "both"))
    run_pipeline(config.model_copy(update={"execution": config.execution.model_copy(update={})}))
    on_ray = load_config(write_config(tmp_path, corpus, server.base_url, "both", execution=RAY))
    sent = server.count
    result = run_pipeline(on_ray)  # same hash: execution is not part of it
    assert (result.shards_skipped, result.shards_done) == (4, 0)
    assert server.count == sent
    # a ray run that lost two markers is finished by the local engine
    for marker in sorted((out / "_state" / "shards").glob("*.json"))[:2]:
        marker.unlink()
    result = run_pipeline(config)
    assert (result.shards_skipped, result.shards_done) == (2, 2)
    assert tables(out) == tables(local_run)


def test_the_cli_connects_to_a_running_cluster_by_address(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, local_run: Path, ray_cluster: str
) -> None:
    config = write_config(tmp_path, corpus, server.base_url, "cli", execution=RAY)
    done = subprocess.run(
        [*CLI, "run", str(config), "--set", f"execution.ray_address={ray_cluster}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4/4 complete (0 resumed, 0 failed)" in done.stdout
    assert f"ray: connecting to {ray_cluster}" in (tmp_path / "cli" / "run.log").read_text()
    assert tables(tmp_path / "cli") == tables(local_run)
