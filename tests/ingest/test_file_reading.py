"""Safe reading (ingest.file_reading) and input expansion (ingest.expand) on real files."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
import zstandard

import builder.ingest.file_reading
from builder.errors import InputError
from builder.ingest.expand import InputSpec, expand, is_trajectory_name
from builder.ingest.file_reading import (
    MAX_DEPTH,
    check_file,
    nesting_depth,
    open_stream,
    parse_json,
)
from builder.ingest.formats.source import Source
from builder.ingest.parallel import run_ingest
from tests.paths import SHARED

GITHUB = SHARED / "mini-swe-agent/github_issue.traj.json"


def test_check_file_names_the_real_cause(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "gone.json").symlink_to(tmp_path / "nowhere.json")
    shutil.copy(GITHUB, tmp_path / "ok.json")
    kinds = {
        name: getattr(check_file(tmp_path / name), "kind", None)
        for name in ("pipe.jsonl", "loop.json", "gone.json", "ok.json", "absent.json")
    }
    assert kinds == {
        "pipe.jsonl": "special_file",
        "loop.json": "symlink_loop",
        "gone.json": "broken_symlink",
        "ok.json": None,
        "absent.json": "missing",
    }


def test_gzip_is_read_through_and_a_renamed_gzip_is_sniffed(tmp_path: Path) -> None:
    data = GITHUB.read_bytes()
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(data))
    (tmp_path / "b.json").write_bytes(gzip.compress(data))  # gzip under a plain name
    for name in ("a.json.gz", "b.json"):
        with open_stream(tmp_path / name) as fh:
            assert fh.read() == data
    assert Source(tmp_path / "a.json.gz").document() == json.loads(data)


def test_zstd_is_read_through_streaming_and_capped(tmp_path: Path) -> None:
    data = GITHUB.read_bytes()
    (tmp_path / "a.json.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    with open_stream(tmp_path / "a.json.zst") as fh:
        assert fh.read() == data
    assert Source(tmp_path / "a.json.zst").document() == json.loads(data)
    # a frame without a content size (as a streaming writer makes), past the cap
    bomb = zstandard.ZstdCompressor().compressobj()
    (tmp_path / "bomb.json.zst").write_bytes(bomb.compress(b" " * 5_000_000) + bomb.flush())
    with pytest.raises(InputError) as caught, open_stream(tmp_path / "bomb.json.zst", 1000) as fh:
        fh.read()
    assert caught.value.kind == "too_large"
    # the zstandard reader returns a cut file's first half as if it were all of it
    whole = (tmp_path / "a.json.zst").read_bytes()
    (tmp_path / "cut.json.zst").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError) as caught, open_stream(tmp_path / "cut.json.zst") as fh:
        fh.read()
    assert caught.value.kind == "zstd" and "cut.json.zst" in str(caught.value)
    assert "ends inside a frame" in str(caught.value)


def test_zstd_without_its_package_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment that lacks `zstandard` (installed without dependencies) says so."""
    path = tmp_path / "data.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(GITHUB.read_bytes()))
    monkeypatch.setattr(builder.ingest.file_reading, "_has_zstd", lambda: False)
    error = check_file(path)
    assert error is not None and error.kind == "zstd_unsupported"
    assert str(path) in str(error) and "pip install zstandard" in str(error)


def test_reads_are_capped(tmp_path: Path) -> None:
    (tmp_path / "bomb.json.gz").write_bytes(gzip.compress(b" " * 5_000_000))
    with pytest.raises(InputError) as caught, open_stream(tmp_path / "bomb.json.gz", 1000) as fh:
        fh.read()
    assert caught.value.kind == "too_large"


def test_nesting_is_measured_without_recursion_and_refused_past_the_limit() -> None:
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    assert nesting_depth(deep) == MAX_DEPTH + 1  # stops early, never recurses
    assert nesting_depth({"a": [1, {"b": []}]}) == 4  # dict, list, dict, list
    for text in ("[" * 50_000 + "]" * 50_000, "[" * 300 + "]" * 300):
        with pytest.raises(InputError) as caught:
            parse_json(text, "x")
        assert caught.value.kind == "nesting_too_deep"
    assert parse_json('{"emoji": "\\ud83d\\ude00"}', "x") == {"emoji": "\U0001f600"}  # a pair
    with pytest.raises(InputError, match="surrogate"):
        parse_json('{"bad": "\\ud800"}', "x")


def test_directory_walk_says_what_it_skips(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    (tmp_path / "runs").mkdir()
    shutil.copy(GITHUB, tmp_path / "runs" / "a.traj.json.gz")
    (tmp_path / "runs" / "again").symlink_to(tmp_path / "runs")  # a loop of links
    found = list(expand(InputSpec(str(tmp_path / "runs"))))
    assert [s.path.name for s in found] == ["a.traj.json.gz"]  # walked once
    passed, empty = expand(InputSpec(str(tmp_path / "empty")))
    assert passed.options["passed_over"] == [str(tmp_path / "empty" / "notes.txt")]
    assert empty.options["error"].kind == "no_inputs"
    (nothing,) = expand(InputSpec(str(tmp_path / "none-*.json")))
    assert nothing.options["error"].kind == "no_match"
    assert is_trajectory_name("x.jsonl.zst") and not is_trajectory_name("x.txt.gz")
    assert is_trajectory_name("x.jsonl.xz") and is_trajectory_name("dump.tar.gz")


def test_a_source_that_yields_nothing_gets_a_row(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"  # Claude Code bookkeeping only, no chat record
    path.write_text(json.dumps({"type": "summary", "summary": "s", "leafUuid": "u"}) + "\n")
    summary = run_ingest([InputSpec(str(path), "claude-code")], tmp_path / "out", workers=1)
    assert summary.total.quarantined == 1
    (row,) = pl.read_parquet(tmp_path / "out" / "quarantine" / "*.parquet").iter_rows(named=True)
    assert row["error_kind"] == "no_records" and "holds no trajectory" in row["message"]
