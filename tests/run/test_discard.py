"""A changed config or changed inputs in one output folder: stale rows dropped, never mixed.

The real CLI over the scripted endpoint (real HTTP) on the project samples; counts are checked
against the raw sample files and against the first run's tables read back from Parquet.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.llm.servers import FakeAPIServer
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config

CLI = [sys.executable, "-m", "builder.cli"]


@pytest.fixture(scope="module")
def server() -> FakeAPIServer:
    with nap_server() as srv:
        yield srv


def _run(config: Path, *sets: str) -> subprocess.CompletedProcess[str]:
    args = [part for s in sets for part in ("--set", s)]
    done = subprocess.run(
        [*CLI, "run", str(config), *args], text=True, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _rows(out: Path, table: str) -> int:
    return pl.read_parquet(out / table / "*.parquet").height


def _raw_trajectories() -> int:
    """Trajectories in the sample files, counted from the files themselves."""
    lines = (SAMPLES / "chat-messages" / "textstats.jsonl").read_text().splitlines()
    return sum(1 for line in lines if line.strip()) + len(
        list((SAMPLES / "mini-swe-agent").glob("*.traj.json"))
    )


def test_a_changed_config_and_changed_inputs_replace_the_old_rows(
    tmp_path: Path, server: FakeAPIServer
) -> None:
    out = tmp_path / "out"
    config = tmp_path / "run.yaml"
    config.write_text(run_config(SAMPLES, server.base_url, out))
    _run(config)
    first = {t: _rows(out, t) for t in ("trajectories", "steps", "judgements", "references")}
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    first_eligible = steps.filter(pl.col("eligible")).height
    shards = len(list((out / "_state" / "shards").glob("*.json")))
    assert first["trajectories"] == _raw_trajectories() and first["judgements"] > 0

    changed = _run(config, "gate.threshold=0.9")  # same steps, other verdicts
    assert "config changed" in changed.stderr + changed.stdout
    assert f"shards: {shards}/{shards} complete (0 resumed" in changed.stdout  # all redone
    assert {t: _rows(out, t) for t in first} == first  # redone once, not appended
    assert len(list((out / "_state" / "shards").glob("*.json"))) == shards

    only = SAMPLES / "mini-swe-agent"  # re-ingest with one of the two trajectories
    _run(config, f"inputs=[{{path: '{only}'}}]")
    assert _rows(out, "trajectories") == len(list(only.glob("*.traj.json"))) == 1
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    eligible = steps.filter(pl.col("eligible"))
    assert 0 < eligible.height < first_eligible
    assert _rows(out, "references") == 2 * eligible.height  # references.samples: 2, no repeats
    keys = ["trajectory_id", "step_index"]
    for table in ("references", "judgements", "candidates", "supervision"):
        left = pl.read_parquet(out / table / "*.parquet").select(keys).unique()
        assert left.join(eligible.select(keys), on=keys, how="anti").is_empty(), table
    assert str(only) in (out / "_state" / "ingest.json").read_text()
