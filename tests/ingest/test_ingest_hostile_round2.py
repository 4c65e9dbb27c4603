"""Round two of hostile input, through the real CLI: odd names, byte-order marks, arrays of
trajectories, every compression and archive kind, a zip bomb, archives in archives, links in
archives, and recoverable shapes. Expected counts are read from the raw files with `json`,
`zipfile` and `tarfile`, never from the adapters.
"""

from __future__ import annotations

import bz2
import io
import json
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import polars as pl
import pytest

from tests.paths import REPO, SHARED

SWE = sorted((SHARED / "swe-agent").glob("*.traj"))
MINI = SHARED / "mini-swe-agent/django__django-16255"
MINI_TRAJ = MINI / "django__django-16255.traj.json"
GITHUB = SHARED / "mini-swe-agent/github_issue.traj.json"
CLAUDE = SHARED / "claude-code/hello-world-script/transcript.jsonl"
SMITH = SHARED / "swe-smith-messages/ft_xml_example.jsonl"
ATIF = SHARED / "atif-variant/trajectory.json"
TIMEOUT = 600


def _zip_bomb(path: Path) -> None:
    """Two members whose central directory declares 4 GiB - 16 bytes each (8.6 GB in all),
    as a bomb's does; the data itself is tiny, so the test writes nothing big."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.jsonl", "{}\n")
        archive.writestr("b.jsonl", "{}\n")
    data = bytearray(buffer.getvalue())
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        struct.pack_into("<I", data, at + 24, 0xFFFFFFF0)  # uncompressed size
        at += 4
    path.write_bytes(bytes(data))


def _tar(path: Path, mode: str, members: dict[str, Path | bytes]) -> None:
    with tarfile.open(path, mode) as archive:
        for name, content in members.items():
            data = content.read_bytes() if isinstance(content, Path) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def _unchained_claude() -> str:
    """The real transcript with the parent links of its first 5 chat records cut."""
    lines = [json.loads(line) for line in CLAUDE.read_text().splitlines() if line.strip()]
    chat = [r for r in lines if r.get("type") in ("user", "assistant")]
    for record in chat[:5]:
        record["parentUuid"] = None
    return "".join(json.dumps(r) + "\n" for r in lines)


def _populate(root: Path) -> tuple[dict[str, int], dict[str, str]]:
    """The folder; returns ({input name: trajectories expected from it}, {name: error kind})."""
    kept: dict[str, int] = {}
    bad: dict[str, str] = {}
    # a file name with a byte that is not UTF-8 (as unpacked archives leave them)
    os.link(GITHUB, os.path.join(os.fsencode(root), b"caf\xe9-issue.traj.json"))
    kept["caf\\xe9-issue.traj.json"] = 1
    (root / "bom.traj").write_bytes(b"\xef\xbb\xbf" + SWE[0].read_bytes())
    kept["bom.traj"] = 1
    (root / "utf16.json").write_bytes(ATIF.read_text().encode("utf-16"))  # BOM + UTF-16 LE
    kept["utf16.json"] = 1
    docs = [json.loads(p.read_text()) for p in (MINI_TRAJ, SWE[1])]
    (root / "array.json").write_text(json.dumps(docs))
    kept["array.json"] = len(json.loads((root / "array.json").read_text()))
    (root / "smith.jsonl.xz").write_bytes(lzma.compress(SMITH.read_bytes()))
    kept["smith.jsonl.xz"] = sum(1 for line in SMITH.read_text().splitlines() if line.strip())
    (root / "swe.traj.bz2").write_bytes(bz2.compress(SWE[1].read_bytes()))
    kept["swe.traj.bz2"] = 0  # the same run as the array's second element: a duplicate
    with zipfile.ZipFile(root / "runs.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(CLAUDE, "claude/transcript.jsonl")
        archive.writestr("claude/README.md", "notes")
        archive.writestr("inner.zip", b"PK\x05\x06" + b"\0" * 18)  # an archive inside
    kept["runs.zip"] = 1
    bad["runs.zip!inner.zip"] = "nested_archive"
    _tar(
        root / "mini.tar.gz",
        "w:gz",
        {"run/django.traj.json": MINI_TRAJ, "run/report.json": MINI / "report.json"},
    )
    kept["mini.tar.gz"] = 0  # the same run as the array's first element
    link = tarfile.TarInfo("link.jsonl")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with tarfile.open(root / "links.tar", "w") as archive:
        archive.addfile(link)
        archive.add(GITHUB, "again.traj.json")  # a copy of the first file: a duplicate
    bad["links.tar!link.jsonl"] = "special_file"
    _zip_bomb(root / "bomb.zip")
    bad["bomb.zip"] = "archive_too_large"
    (root / "cut.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"\0" * 40)
    bad["cut.tar.gz"] = "gzip"
    text = GITHUB.read_text()
    (root / "nul.jsonl").write_text(text.replace("\n", " ")[:4000].replace('"', '"\0', 1) + "\n")
    bad["nul.jsonl"] = "invalid_json"
    (root / "unchained.jsonl").write_text(_unchained_claude())
    kept["unchained.jsonl"] = 1
    bad["unchained.jsonl"] = "unchained_records"
    (root / "README.md").write_text("what these runs are")
    return kept, bad


def _ingest(out: Path, *inputs: Path, strict: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-m", "builder.cli", "ingest", *map(str, inputs), "--out", str(out)]
    args += ["--workers", "2", *(["--strict"] if strict else [])]
    done = subprocess.run(args, cwd=REPO, env=env, timeout=TIMEOUT, capture_output=True, text=True)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict, str]:
    base = tmp_path_factory.mktemp("hostile2")
    root = base / "in"
    root.mkdir()
    kept, bad = _populate(root)
    done = _ingest(base / "out", root)
    assert done.returncode == 0, done.stderr[-3000:]
    return base, kept, bad, done.stdout


def _rows(out: Path, table: str) -> pl.DataFrame:
    return pl.read_parquet(out / table / "*.parquet")


def test_every_good_trajectory_is_kept_from_every_kind_of_input(ingested: tuple) -> None:
    base, kept, _, _ = ingested
    trajectories = _rows(base / "out", "trajectories")
    root = str(base / "in") + "/"
    by_input: dict[str, int] = {}
    for path in trajectories["source_path"].to_list():
        name = path.removeprefix(root).split("!")[0]
        by_input[name] = by_input.get(name, 0) + 1
    assert by_input == {name: n for name, n in kept.items() if n}


def test_names_are_safe_text_and_members_are_named_after_their_archive(ingested: tuple) -> None:
    base, _, _, _ = ingested
    paths = set(_rows(base / "out", "trajectories")["source_path"].to_list())
    root = str(base / "in")
    assert f"{root}/caf\\xe9-issue.traj.json" in paths
    assert f"{root}/runs.zip!claude/transcript.jsonl" in paths
    array = _rows(base / "out", "trajectories").filter(
        pl.col("source_path").str.ends_with("y.json")
    )
    assert sorted(array["record_index"].to_list()) == [0, 1]  # the element index


def test_each_bad_input_has_a_row_naming_it_and_its_cause(ingested: tuple) -> None:
    base, _, bad, _ = ingested
    rows = _rows(base / "out", "quarantine")
    root = str(base / "in") + "/"
    found = {
        (r["source_path"].removeprefix(root), r["error_kind"]) for r in rows.iter_rows(named=True)
    }
    for name, kind in bad.items():
        assert (name, kind) in found, (name, kind, sorted(found))
    nul = rows.filter(pl.col("error_kind") == "invalid_json")["message"].to_list()
    assert any("nul.jsonl line 1" in m for m in nul)
    lost = rows.filter(pl.col("error_kind") == "unchained_records")["message"].item()
    # 5 parent links cut: the fifth cut record is the root the chain now ends at, the 4 before
    # it are linked to nothing (8 chat records in the raw file)
    assert "4 of 8 records" in lost


def test_duplicates_inside_archives_are_dropped_against_the_first_copy(ingested: tuple) -> None:
    base, _, _, _ = ingested
    rows = _rows(base / "out", "quarantine").filter(pl.col("error_kind").str.starts_with("dup"))
    assert sorted(Path(p.split("!")[0]).name for p in rows["source_path"]) == [
        "links.tar",
        "mini.tar.gz",
        "swe.traj.bz2",
    ]


def test_passed_over_files_are_named_and_fail_strict(ingested: tuple) -> None:
    base, _, _, stdout = ingested
    summary = json.loads((base / "out" / "ingest_summary.json").read_text())
    root = str(base / "in")
    assert summary["passed_over"]["count"] == 2
    assert sorted(summary["passed_over"]["files"]) == [
        f"{root}/README.md",
        f"{root}/runs.zip!claude/README.md",
    ]
    assert "passed over 2 file(s)" in stdout
    good = base / "good"
    good.mkdir()
    shutil.copy(GITHUB, good / "a.traj.json")
    assert _ingest(base / "ok", good, strict=True).returncode == 0
    (good / "notes.txt").write_text("x")
    done = _ingest(base / "strict", good, strict=True)
    assert done.returncode == 1 and "1 file(s) passed over" in done.stderr


def test_a_sidecar_inside_a_tar_still_gives_resolved(tmp_path: Path) -> None:
    _tar(
        tmp_path / "mini.tar.xz",
        "w:xz",
        {"run/django.traj.json": MINI_TRAJ, "run/report.json": MINI / "report.json"},
    )
    assert _ingest(tmp_path / "out", tmp_path / "mini.tar.xz").returncode == 0
    (row,) = _rows(tmp_path / "out", "trajectories").iter_rows(named=True)
    report = json.loads((MINI / "report.json").read_text())
    assert isinstance(report["resolved"], bool) and row["resolved"] == report["resolved"]
