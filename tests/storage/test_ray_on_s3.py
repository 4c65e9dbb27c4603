"""engine=ray with output.dir and inputs on a real S3 API (moto on 127.0.0.1): the actors
upload their shards (tables, then marker) and the bucket ends with the local engine's rows.

The run is a CLI subprocess that starts its own local Ray, so its workers inherit the dummy
credentials from the environment, as on a cluster whose nodes carry their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from builder.config import load_config
from builder.run.driver import run_pipeline
from builder.run.shards import NAP_TABLES
from tests.run.nap_server import KEYS, nap_server, replicate_samples, run_config
from tests.storage.s3_server import SECRET, s3_server, store_files, upload_folder
from tests.storage.test_run_on_s3 import _store_table

pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]


def test_the_ray_engine_on_s3_writes_the_local_engine_rows_and_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(tmp_path / "user-cache"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with s3_server(monkeypatch, "data", "runs") as client, nap_server() as server:
        upload_folder(client, corpus, "data/corpus")
        local_out = tmp_path / "local"
        base = json.loads(run_config(corpus, server.base_url, local_out))
        (tmp_path / "local.yaml").write_text(json.dumps(base))
        assert run_pipeline(load_config(tmp_path / "local.yaml")).shards_done == 2

        remote = dict(base, inputs=[{"path": "s3://data/corpus"}])
        remote["output"] = {**base["output"], "dir": "s3://runs/ray"}  # type: ignore[dict-item]
        remote["execution"] = {"engine": "ray", "actors": 2, "actor_cpus": 0.5, "num_cpus": 2}
        (tmp_path / "ray.yaml").write_text(json.dumps(remote))
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        done = subprocess.run(
            [sys.executable, "-m", "builder.cli", "run", str(tmp_path / "ray.yaml")],
            env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        run_log = client.open_input_stream("runs/ray/run.log").read().decode()
        assert SECRET not in done.stdout + done.stderr + run_log  # never logged

        stored = store_files(client, "runs/ray")
        assert sorted(k for k in stored if k.startswith("_state/shards/")) == [
            f"_state/shards/{p.name}" for p in sorted((local_out / "_state/shards").iterdir())
        ]
        for table in NAP_TABLES:
            mine = pl.read_parquet(local_out / table / "*.parquet").sort(KEYS[table])
            assert _store_table(client, "runs/ray", table).equals(mine), table
