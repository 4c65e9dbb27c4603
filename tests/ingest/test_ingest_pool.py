"""Ingest runs a single task in this process and several in a process pool, with the same
tables either way (counted against the real sample files' expected counts)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import builder.ingest.expand
import builder.ingest.parallel
from builder.ingest.parallel import InputSpec, run_ingest
from tests.ingest.test_ingest import EXPECTED
from tests.paths import SHARED


class NoPool:
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a process pool was started")


def tables(out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet").sort("trajectory_id")
    steps = pl.read_parquet(out / "steps" / "*.parquet").sort("trajectory_id", "step_index")
    return trajectories, steps


def expected_totals() -> tuple[int, int, int]:
    trajectories, steps, eligible = (sum(v[k] for v in EXPECTED.values()) for k in range(3))
    return trajectories, steps, eligible


def totals(out: Path) -> tuple[int, int, int]:
    trajectories, steps = tables(out)
    return trajectories.height, steps.height, int(steps["eligible"].sum())


def test_one_task_runs_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder.ingest.parallel, "ProcessPoolExecutor", NoPool)
    run_ingest([InputSpec(str(SHARED))], tmp_path, workers=2)
    assert totals(tmp_path) == expected_totals()


def test_several_tasks_use_the_pool_and_give_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_ingest([InputSpec(str(SHARED))], tmp_path / "one", workers=2)
    monkeypatch.setattr(builder.ingest.expand, "TASK_BYTES", 100_000)  # several tasks
    run_ingest([InputSpec(str(SHARED))], tmp_path / "pool", workers=2)
    assert len({p.stem.rsplit("-", 1)[0] for p in (tmp_path / "pool" / "steps").iterdir()}) > 1
    for here, pooled in zip(tables(tmp_path / "one"), tables(tmp_path / "pool"), strict=True):
        assert here.equals(pooled)
    monkeypatch.setattr(builder.ingest.parallel, "ProcessPoolExecutor", NoPool)
    with pytest.raises(AssertionError, match="process pool"):
        run_ingest([InputSpec(str(SHARED))], tmp_path / "again", workers=2)
