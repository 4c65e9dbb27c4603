"""A folder with one file of every hostile kind next to real good files, through the real CLI.

The ingest runs in a subprocess with a timeout (a FIFO used to hang it for good): it must exit
0, quarantine every broken file under its real cause, write for the good files exactly the
rows they get when ingested alone, and keep one copy of each trajectory. Root reads through
permission bits, so as root the subprocess runs without CAP_DAC_OVERRIDE/DAC_READ_SEARCH.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import zstandard

from tests.paths import REPO, SHARED

CLAUDE = SHARED / "claude-code/hello-world-script/transcript.jsonl"
MINI_DIR = SHARED / "mini-swe-agent/django__django-16255"
GITHUB = SHARED / "mini-swe-agent/github_issue.traj.json"
LLM_LOG = next((SHARED / "openhands-llm-log").glob("*.json"))
TIMEOUT = 600  # generous on 2 shared cores; only a hang reaches it
NO_DAC_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
CAN_DROP_DAC = shutil.which("setpriv") is not None
PERMISSION_BITS_APPLY = os.geteuid() != 0 or CAN_DROP_DAC


def _claude_with_leading_bookkeeping() -> str:
    """The real transcript after 40 summary and snapshot records (a resumed session)."""
    lead = [{"type": "summary", "summary": f"part {k}", "leafUuid": f"l{k}"} for k in range(20)]
    lead += [
        {"type": "file-history-snapshot", "messageId": f"m{k}", "snapshot": {}} for k in range(20)
    ]
    return "".join(json.dumps(r) + "\n" for r in lead) + CLAUDE.read_text()


def _populate(root: Path) -> dict[str, str]:
    """Write the corpus; returns {file name: expected error kind} for the broken files."""
    good = root / "good"
    good.mkdir()
    shutil.copytree(SHARED / "swe-agent", good / "swe-agent")
    shutil.copytree(MINI_DIR, good / "mini")  # with its report.json sidecar
    shutil.copy(LLM_LOG, good / "llm.json")
    (good / "resumed.jsonl").write_text(_claude_with_leading_bookkeeping())
    (good / "github_issue.traj.json.gz").write_bytes(gzip.compress(GITHUB.read_bytes()))
    expected = {
        "deep.json": "nesting_too_deep",
        "deep.jsonl": "nesting_too_deep",
        "deep_500.json": "nesting_too_deep",
        "noperm.json": "permission_denied",
        "locked": "permission_denied",
        "fifo.jsonl": "special_file",
        "loop.json": "symlink_loop",
        "dangling.json": "broken_symlink",
        "corrupt.json.gz": "gzip",
        "truncated.json.gz": "gzip",
        "latin1.jsonl": "encoding",
        "truncated.json": "invalid_json",
        "empty.json": "empty",
        "surrogate.traj.json": "encoding",
        "copy-of-django.traj.json": "duplicate_id",
        "renamed-github.traj.json": "duplicate_content",
        "nothing-*.json": "no_match",
        "emptydir": "no_inputs",
    }
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "deep.jsonl").write_text(('{"a":' * 5000 + "1" + "}" * 5000 + "\n") * 2)
    (root / "deep_500.json").write_text('{"messages":' + "[" * 500 + "]" * 500 + "}")
    shutil.copy(GITHUB, root / "noperm.json")
    (root / "noperm.json").chmod(0)
    (root / "locked").mkdir()
    shutil.copy(GITHUB, root / "locked" / "inside.traj.json")
    os.mkfifo(root / "fifo.jsonl")
    (root / "loop.json").symlink_to(root / "loop.json")
    (root / "dangling.json").symlink_to(root / "no-such-target.json")
    (root / "corrupt.json.gz").write_bytes(b"\x1f\x8b\x08\x00" + random.Random(0).randbytes(200))
    (root / "truncated.json.gz").write_bytes(gzip.compress(GITHUB.read_bytes())[:300])
    latin1 = '{"messages": [{"role": "user", "content": "caf\xe9"}]}\n'
    (root / "latin1.jsonl").write_bytes(latin1.encode("latin-1"))
    (root / "truncated.json").write_text(GITHUB.read_text()[:3000])
    (root / "empty.json").write_text("")
    text = GITHUB.read_text()  # a lone surrogate escape: valid JSON, not storable text
    (root / "surrogate.traj.json").write_text(
        text.replace('"content": "', '"content": "\\ud800', 1)
    )
    dup = root / "zz-later"
    dup.mkdir()
    shutil.copy(MINI_DIR / "django__django-16255.traj.json", dup / "copy-of-django.traj.json")
    shutil.copy(GITHUB, dup / "renamed-github.traj.json")
    data = zstandard.ZstdCompressor().compress(SHARED.joinpath(
        "swe-smith-messages/ft_xml_example.jsonl").read_bytes())  # fmt: skip
    (good / "smith.jsonl.zst").write_bytes(data)
    whole = zstandard.ZstdCompressor().compress(LLM_LOG.read_bytes())
    (root / "cut.json.zst").write_bytes(whole[: len(whole) // 2])  # ends inside its frame
    expected["cut.json.zst"] = "zstd"
    (root / "emptydir").mkdir()
    (root / "emptydir" / "README.md").write_text("no trajectories here")
    if not PERMISSION_BITS_APPLY:  # root without setpriv reads through any mode
        shutil.rmtree(root / "locked")
        (root / "noperm.json").unlink()
        del expected["noperm.json"], expected["locked"]
    return expected


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    base = tmp_path_factory.mktemp("hostile")
    root = base / "corpus"
    root.mkdir()
    expected = _populate(root)
    if PERMISSION_BITS_APPLY:
        (root / "locked").chmod(0)
    yield base, expected
    if PERMISSION_BITS_APPLY:
        (root / "locked").chmod(0o755)


def _ingest(base: Path, out: Path, *inputs: str, strict: bool = False) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-m", "builder.cli", "ingest", *inputs, "--out", str(out)]
    args += ["--workers", "2", *(["--strict"] if strict else [])]
    if os.geteuid() == 0 and CAN_DROP_DAC:
        args = [*NO_DAC_OVERRIDE, *args]
    done = subprocess.run(args, cwd=REPO, env=env, timeout=TIMEOUT, capture_output=True, text=True)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.returncode


@pytest.fixture(scope="module")
def full_run(corpus: tuple[Path, dict[str, str]]) -> tuple[Path, int]:
    base, _ = corpus
    out = base / "out"
    root = base / "corpus"
    code = _ingest(base, out, str(root), str(root / "nothing-*.json"), str(root / "emptydir"))
    return out, code


def test_exits_zero_and_quarantines_each_broken_file_under_its_cause(
    corpus: tuple[Path, dict[str, str]], full_run: tuple[Path, int]
) -> None:
    _, expected = corpus
    out, code = full_run
    assert code == 0
    rows = pl.read_parquet(out / "quarantine" / "*.parquet")
    found = {(Path(r["source_path"]).name, r["error_kind"]) for r in rows.iter_rows(named=True)}
    for name, kind in expected.items():
        assert (name, kind) in found, (name, kind, sorted(k for n, k in found if n == name))
    assert rows["message"].str.len_chars().min() > 0
    kept = rows.filter(pl.col("error_kind").str.starts_with("duplicate_"))["message"]
    assert all("first copy in input order" in m for m in kept)


def test_good_files_give_the_rows_they_give_alone(
    corpus: tuple[Path, dict[str, str]], full_run: tuple[Path, int]
) -> None:
    base, _ = corpus
    out, _ = full_run
    alone = base / "alone"
    assert _ingest(base, alone, str(base / "corpus" / "good")) == 0
    good = str(base / "corpus" / "good")
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    mine = trajectories.filter(pl.col("source_path").str.starts_with(good)).sort("trajectory_id")
    theirs = pl.read_parquet(alone / "trajectories" / "*.parquet").sort("trajectory_id")
    # 2 swe-agent, mini, llm log, resumed Claude Code, gzip, and 3 from the zst file
    assert theirs.height == 9
    assert mine.equals(theirs)
    ids = theirs["trajectory_id"].to_list()
    steps = pl.read_parquet(out / "steps" / "*.parquet").filter(pl.col("trajectory_id").is_in(ids))
    alone_steps = pl.read_parquet(alone / "steps" / "*.parquet")
    order = ["trajectory_id", "step_index"]
    assert steps.sort(order).equals(alone_steps.sort(order))
    assert not list((alone / "quarantine").glob("*.parquet"))  # the good files are all good


def test_no_trajectory_id_appears_twice(full_run: tuple[Path, int]) -> None:
    out, _ = full_run
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    assert trajectories["trajectory_id"].n_unique() == trajectories.height
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    assert steps.select("trajectory_id", "step_index").is_unique().all()
    summary = json.loads((out / "ingest_summary.json").read_text())
    assert summary["total"]["trajectories"] == trajectories.height
    assert summary["total"]["steps"] == steps.height
    assert summary["total"]["duplicates"] == 2


def test_strict_turns_the_same_run_into_a_failure(corpus: tuple[Path, dict[str, str]]) -> None:
    base, _ = corpus
    root = base / "corpus"
    assert (
        _ingest(base, base / "strict", str(root / "good"), str(root / "deep.json"), strict=True)
        == 1
    )


def test_a_smaller_ingest_replaces_the_tables_of_a_bigger_one(
    corpus: tuple[Path, dict[str, str]], full_run: tuple[Path, int]
) -> None:
    base, _ = corpus
    out = base / "reused"
    shutil.copytree(full_run[0], out)
    small = SHARED / "swe-agent" / "pydicom__pydicom-1458.traj"
    assert _ingest(base, out, str(small)) == 0
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    assert trajectories["source_path"].to_list() == [str(small)]
    assert not list((out / "quarantine").glob("*.parquet"))
    summary = json.loads((out / "ingest_summary.json").read_text())
    assert summary["total"]["trajectories"] == 1
    assert stat.S_ISDIR((out / "steps").stat().st_mode)
