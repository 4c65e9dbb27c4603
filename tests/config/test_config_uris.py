"""`file://` URIs for inputs and output.dir run like paths; object-store URIs are kept for
output.dir and inputs and refused, with the reason, for the SQLite cache."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from builder.config import load_config
from builder.errors import ConfigError
from builder.run.driver import run_pipeline
from tests.run.nap_server import nap_server, replicate_samples, run_config


def test_a_run_with_file_uris_for_inputs_and_output_writes_its_tables_there(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    out = tmp_path / "out dir"  # a space: the URI is percent-encoded
    with nap_server() as server:
        config = json.loads(run_config(corpus, server.base_url, out))
        config["inputs"] = [{"path": corpus.as_uri()}]
        config["output"]["dir"] = out.as_uri()
        path = tmp_path / "uri.yaml"
        path.write_text(json.dumps(config))
        cfg = load_config(path)
        assert cfg.output.dir == str(out) and cfg.inputs[0].path == str(corpus)
        result = run_pipeline(cfg)
    assert result.exit_code == 0 and result.shards_done == 2
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    raw_files = len(list(corpus.glob("mini-*.traj.json"))) + len(
        (corpus / "chat.jsonl").read_text().splitlines()
    )
    assert trajectories.height == raw_files == 2
    assert len(list((out / "_state" / "shards").glob("*.json"))) == 2


@pytest.mark.parametrize("uri", ["s3://bucket/run", "gs://bucket/run"])
def test_an_object_store_output_dir_is_kept_as_its_uri(tmp_path: Path, uri: str) -> None:
    path = tmp_path / "store.yaml"
    path.write_text(json.dumps({"inputs": ["s3://data/corpus"], "output": {"dir": uri}}))
    cfg = load_config(path)
    assert cfg.output.dir == uri and cfg.inputs[0].path == "s3://data/corpus"


def test_an_object_store_run_keeps_its_cache_in_the_local_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.yaml"
    output = {"dir": "s3://bucket/run", "local_dir": "mirror"}
    path.write_text(json.dumps({"inputs": [str(tmp_path)], "output": output}))
    cfg = load_config(path)
    assert cfg.cache_dir() == tmp_path / "mirror" / "cache"  # relative to the config file
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(tmp_path / "user"))
    default = cfg.model_copy(update={"output": cfg.output.model_copy(update={"local_dir": None})})
    mirror = default.local_output_dir()
    assert mirror.parent == tmp_path / "user" / "runs" and default.cache_dir() == mirror / "cache"


def test_an_object_store_cache_dir_is_refused_because_sqlite_needs_locks(tmp_path: Path) -> None:
    path = tmp_path / "s3.yaml"
    path.write_text(json.dumps({"inputs": [str(tmp_path)], "cache": {"dir": "s3://bucket/c"}}))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "cache.dir" in message and "s3://" in message and "file locks" in message


def test_a_file_uri_with_a_host_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps({"inputs": ["file://server/share/runs"]}))
    with pytest.raises(ConfigError, match=r"inputs\[0\].*file:///path"):
        load_config(path)
