"""The mirror sync against a `file://` store (pyarrow's LocalFileSystem): what is uploaded,
what is skipped, that nothing unchanged moves twice, and deletes that drop markers first."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.errors import ConfigError
from builder.storage.inputs import localize_input
from builder.storage.mirror import bind, delete_remote, pull, push_all, push_paths, upload_order
from builder.storage.uri import is_remote, open_uri


def _run_folder(root: Path) -> Path:
    """A mirror with a table, a marker, a report and the local-only SQLite files."""
    (root / "steps").mkdir(parents=True)
    pq.write_table(pa.table({"trajectory_id": ["a", "b"]}), root / "steps" / "s-0.parquet")
    (root / "_state" / "shards").mkdir(parents=True)
    (root / "_state" / "shards" / "s-0.json").write_text('{"config_hash": "x"}')
    (root / "_state" / "batches.sqlite").write_bytes(b"sqlite")
    (root / "cache").mkdir()
    (root / "cache" / "requests.sqlite").write_bytes(b"sqlite")
    (root / "steps" / ".s-1.parquet.tmp-7").write_bytes(b"torn")
    (root / "report.json").write_text("{}")
    return root


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_push_uploads_tables_markers_and_reports_but_never_sqlite_or_temp_files(
    tmp_path: Path,
) -> None:
    local = _run_folder(tmp_path / "mirror")
    store = tmp_path / "store"
    uri = store.as_uri()
    bind(local, uri)
    assert push_all(local, uri) == 3
    assert _files(store) == {"steps/s-0.parquet", "_state/shards/s-0.json", "report.json"}
    assert pq.read_table(store / "steps" / "s-0.parquet").column(0).to_pylist() == ["a", "b"]
    assert push_all(local, uri) == 0  # unchanged: nothing moves twice

    (local / "report.json").write_text('{"done": true}')
    os.utime(local / "report.json", ns=(2**62, 2**62))  # clearly newer than the object
    assert push_all(local, uri) == 1
    assert (store / "report.json").read_text() == '{"done": true}'


def test_pull_fetches_what_is_missing_and_keeps_newer_local_files(tmp_path: Path) -> None:
    first = _run_folder(tmp_path / "first")
    uri = (tmp_path / "store").as_uri()
    push_all(first, uri)
    other = tmp_path / "other"
    assert pull(other, uri) == 3
    assert _files(other) == {"steps/s-0.parquet", "_state/shards/s-0.json", "report.json"}
    assert pull(other, uri) == 0
    (other / "report.json").write_text('{"mine": 1}')  # written after the pull: kept
    assert pull(other, uri) == 0 and (other / "report.json").read_text() == '{"mine": 1}'


def test_push_paths_is_a_no_op_for_a_plain_local_run_folder(tmp_path: Path) -> None:
    local = _run_folder(tmp_path / "run")
    push_paths(local, [local / "report.json"])  # not bound to a store: nothing to do
    assert not (tmp_path / "store").exists()
    bind(local, (tmp_path / "store").as_uri())
    push_paths(local, [local / "report.json", local / "cache" / "requests.sqlite"])
    assert _files(tmp_path / "store") == {"report.json"}


def test_delete_remote_drops_the_markers_and_the_tables(tmp_path: Path) -> None:
    local = _run_folder(tmp_path / "run")
    store = tmp_path / "store"
    bind(local, store.as_uri())
    push_all(local, store.as_uri())
    delete_remote(local, ["steps", "_state/shards", "report.json"])
    assert _files(store) == set()


def test_an_input_folder_on_a_store_is_copied_once_and_a_missing_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(tmp_path / "cache"))
    from tests.storage.s3_server import s3_server, upload_folder

    source = tmp_path / "corpus"
    (source / "nested").mkdir(parents=True)
    (source / "a.jsonl").write_text('{"x": 1}\n')
    (source / "nested" / "b.jsonl").write_text('{"x": 2}\n')
    with s3_server(monkeypatch, "data") as client:
        upload_folder(client, source, "data/corpus")
        assert is_remote("s3://data/corpus") and not is_remote(source.as_uri())
        copy = Path(localize_input("s3://data/corpus"))
        assert _files(copy) == {"a.jsonl", "nested/b.jsonl"}
        assert (copy / "nested" / "b.jsonl").read_text() == '{"x": 2}\n'
        single = Path(localize_input("s3://data/corpus/a.jsonl"))
        assert single.read_text() == '{"x": 1}\n'
        with pytest.raises(ConfigError, match="s3://data/nothing"):
            localize_input("s3://data/nothing")
        open_uri("s3://data/corpus")
    assert localize_input(str(source)) == str(source)  # local paths pass unchanged


def test_completion_markers_are_uploaded_after_every_table() -> None:
    rels = ["_state/shards/s-0.json", "trajectories/part-0.parquet", "_state/ingest.json"]
    rels += ["steps/part-0.parquet", "_state/budget.json", "report.json"]
    order = upload_order(rels)
    assert set(order[-2:]) == {"_state/shards/s-0.json", "_state/ingest.json"}
    assert set(order[:-2]) == set(rels) - set(order[-2:])
