"""A whole run with inputs and output.dir on a real S3 API (moto on 127.0.0.1): the tables on
the store read back equal to a local run's, markers present, SQLite never uploaded, and a
resume from an empty local mirror on "another machine" takes the finished shards from the
store and sends no request."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs

from builder.config import load_config
from builder.run.driver import run_pipeline
from builder.run.shards import NAP_TABLES
from tests.run.nap_server import KEYS, nap_server, replicate_samples, run_config
from tests.storage.s3_server import s3_server, store_files, upload_folder


def _config(tmp_path: Path, name: str, config: dict[str, object]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(config))
    return path


def _store_table(client: pafs.FileSystem, prefix: str, table: str) -> pl.DataFrame:
    keys = [k for k in store_files(client, f"{prefix}/{table}") if k.endswith(".parquet")]
    parts = [pq.read_table(f"{prefix}/{table}/{k}", filesystem=client) for k in keys]
    return pl.concat([pl.from_arrow(p) for p in parts]).sort(KEYS[table])  # type: ignore[misc]


def test_a_run_on_s3_writes_the_local_run_tables_and_resumes_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(tmp_path / "user-cache"))
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with s3_server(monkeypatch, "data", "runs") as client, nap_server() as server:
        upload_folder(client, corpus, "data/corpus")
        local_out = tmp_path / "local-out"
        base = json.loads(run_config(corpus, server.base_url, local_out))
        local = run_pipeline(load_config(_config(tmp_path, "local", base)))
        assert local.exit_code == 0 and local.shards_done == 2
        requests_local = server.count

        remote = dict(base, inputs=[{"path": "s3://data/corpus"}])
        remote["output"] = {**base["output"], "dir": "s3://runs/nap"}  # type: ignore[dict-item]
        cfg = load_config(_config(tmp_path, "s3", remote))
        assert cfg.output.dir == "s3://runs/nap"
        result = run_pipeline(cfg)
        assert result.exit_code == 0 and result.shards_done == 2
        requests_s3 = server.count - requests_local

        stored = store_files(client, "runs/nap")
        assert sorted(k for k in stored if k.startswith("_state/shards/")) == [
            f"_state/shards/{p.name}" for p in sorted((local_out / "_state/shards").iterdir())
        ]
        assert {"report.json", "config.hash", "config.resolved.yaml", "_state/ingest.json"} <= set(
            stored
        )
        assert not [k for k in stored if ".sqlite" in k or k.startswith("cache/")]
        assert (
            "s3://runs/nap"
            in client.open_input_stream("runs/nap/config.resolved.yaml").read().decode()
        )
        for table in (*NAP_TABLES, "steps"):
            mine = pl.read_parquet(local_out / table / "*.parquet").sort(KEYS[table])
            assert _store_table(client, "runs/nap", table).equals(mine), table
        raw = len(list(corpus.glob("mini-*.traj.json"))) + len(
            (corpus / "chat.jsonl").read_text().splitlines()
        )
        assert _store_table(client, "runs/nap", "trajectories").height == raw == 2

        # another machine: an empty mirror, no request cache; the store's markers are the truth
        remote["output"]["local_dir"] = str(tmp_path / "other-machine")  # type: ignore[index]
        before = server.count
        again = run_pipeline(load_config(_config(tmp_path, "s3-again", remote)))
        assert again.exit_code == 0 and (again.shards_done, again.shards_skipped) == (0, 2)
        assert server.count == before

        # a shard whose marker never reached the store is redone, and only that one
        marker = next(k for k in stored if k.startswith("_state/shards/"))
        client.delete_file(f"runs/nap/{marker}")
        remote["output"]["local_dir"] = str(tmp_path / "third-machine")  # type: ignore[index]
        redo = run_pipeline(load_config(_config(tmp_path, "s3-redo", remote)))
        assert (redo.shards_done, redo.shards_skipped) == (1, 1)
        assert 0 < server.count - before < requests_s3
        assert marker in store_files(client, "runs/nap")
        supervision = _store_table(client, "runs/nap", "supervision")
        assert supervision.equals(
            pl.read_parquet(local_out / "supervision" / "*.parquet").sort(KEYS["supervision"])
        )
