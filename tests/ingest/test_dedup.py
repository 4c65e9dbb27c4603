"""One copy per trajectory across tasks: the first in input order, whoever finishes first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from builder.ingest.parallel import InputSpec, run_ingest
from tests.paths import SHARED

MINI = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
GITHUB = SHARED / "mini-swe-agent/github_issue.traj.json"
SWE = SHARED / "swe-agent/pydicom__pydicom-1458.traj"


@pytest.fixture()
def inputs(tmp_path: Path) -> list[Path]:
    """Five files, each its own task; the 3rd repeats the 1st's id, the 5th the 2nd's chat."""
    folder = tmp_path / "in"
    folder.mkdir()
    paths = [folder / f"{k}-{name}" for k, name in enumerate(
        ["a.traj.json", "b.traj.json", "c.traj.json", "d.traj", "e.traj.json"])]  # fmt: skip
    shutil.copy(MINI, paths[0])
    shutil.copy(GITHUB, paths[1])
    shutil.copy(MINI, paths[2])  # same instance_id and messages: same trajectory id
    shutil.copy(SWE, paths[3])
    paths[4].write_text(json.dumps(json.loads(GITHUB.read_text())))  # same chat, other name/id
    return paths


def test_later_copies_are_dropped_across_tasks(
    inputs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("builder.ingest.expand.TASK_BYTES", 1)  # one task per file, two workers
    out = tmp_path / "out"
    summary = run_ingest([InputSpec(str(p)) for p in inputs], out, workers=2)
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    assert sorted(Path(p).name for p in trajectories["source_path"]) == [
        "0-a.traj.json", "1-b.traj.json", "3-d.traj",
    ]  # fmt: skip
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    assert set(steps["trajectory_id"]) == set(trajectories["trajectory_id"])
    assert steps.select("trajectory_id", "step_index").is_unique().all()
    rows = pl.read_parquet(out / "quarantine" / "*.parquet")
    dropped = {(Path(r["source_path"]).name, r["error_kind"]) for r in rows.iter_rows(named=True)}
    assert dropped == {("2-c.traj.json", "duplicate_id"), ("4-e.traj.json", "duplicate_content")}
    total = summary.total
    assert (total.trajectories, total.steps, total.duplicates) == (
        trajectories.height, steps.height, 2,
    )  # fmt: skip
    assert total.eligible == steps["eligible"].sum()


def test_input_order_decides_which_copy_is_kept(inputs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_ingest([InputSpec(str(inputs[2])), InputSpec(str(inputs[0]))], out, workers=1)
    kept = pl.read_parquet(out / "trajectories" / "*.parquet")["source_path"].to_list()
    assert kept == [str(inputs[2])]
