"""Shards sliced from their ingest files: the same records as a filtered read of each file,
each file read once for all its shards, one file of each kind held, and no stale answer after
a re-ingest.

The ingest is real (the shared sample trajectories), written in many small files per task so
that a shard's steps span several steps files; the oracle is pyarrow's filtered read of the
files, the path `load_shard` used before.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import builder.ingest.expand
import builder.ingest.task
from builder.ingest.parallel import InputSpec, run_ingest
from builder.run import shard_tables
from builder.run.shard_tables import SHARD_TABLES, LastOne
from builder.run.shards import ShardPlan, load_shard, plan_shards
from builder.steps.pairing import EligibilityRules
from builder.storage.parquet_shards import ShardWriter
from schemas.common import from_row
from schemas.steps import StepRecord
from schemas.trajectories import TrajectoryRecord
from tests.paths import SHARED


def ingest_small_files(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared samples in tasks of ~400 KB, written in ~20 KB files (several per task)."""
    monkeypatch.setattr(builder.ingest.expand, "TASK_BYTES", 400_000)
    monkeypatch.setattr(
        builder.ingest.task, "ShardWriter", functools.partial(ShardWriter, flush_bytes=20_000)
    )
    run_ingest([InputSpec(SHARED, None, {})], out, rules=EligibilityRules(), workers=1)


def filtered_read(
    out: Path, plan: ShardPlan
) -> tuple[dict[str, TrajectoryRecord], list[StepRecord]]:
    """The shard read with row filters, file by file (the oracle)."""
    wanted = list(plan.trajectory_ids)
    table = pq.read_table(plan.trajectories_file, filters=[("trajectory_id", "in", wanted)])
    trajectories = {r["trajectory_id"]: from_row(TrajectoryRecord, r) for r in table.to_pylist()}
    steps = []
    for path in sorted((out / "steps").glob(f"{plan.task_prefix}-*.parquet")):
        rows = pq.read_table(
            path, filters=[("trajectory_id", "in", wanted), ("eligible", "=", True)]
        ).to_pylist()
        steps += [from_row(StepRecord, r) for r in rows]
    order = {tid: i for i, tid in enumerate(wanted)}
    steps.sort(key=lambda s: (order[s.trajectory_id], s.step_index))
    return trajectories, steps


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ingest")
    with pytest.MonkeyPatch.context() as monkeypatch:
        ingest_small_files(out, monkeypatch)
    return out


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    SHARD_TABLES.clear()


def test_ingest_has_several_files_per_task(ingested: Path) -> None:
    prefixes = Counter(p.stem.rsplit("-", 1)[0] for p in (ingested / "steps").glob("*.parquet"))
    assert len(prefixes) >= 2 and max(prefixes.values()) >= 3


@pytest.mark.parametrize("shard_size", [1, 2, 5])
def test_slices_equal_a_filtered_read(ingested: Path, shard_size: int) -> None:
    plans = list(plan_shards(ingested, shard_size))
    eligible = sum(
        pq.read_table(p, columns=["eligible"]).column(0).to_pylist().count(True)
        for p in (ingested / "steps").glob("*.parquet")
    )
    seen = 0
    for plan in plans:
        trajectories, steps = load_shard(ingested, plan)
        expected = filtered_read(ingested, plan)
        assert (trajectories, steps) == expected
        assert list(trajectories) == list(expected[0])
        seen += len(steps)
    assert seen == eligible > 0  # every eligible step of the folder, once


def test_each_file_read_once(ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[tuple[Path, bool]] = Counter()
    real = shard_tables.read_file

    def counting(path: Path, columns: list[str] | None = None) -> object:
        reads[(path, columns is None)] += 1  # the ids of a steps file, or a whole file
        return real(path, columns)

    monkeypatch.setattr(shard_tables, "read_file", counting)
    plans = list(plan_shards(ingested, 1))
    for plan in plans:
        load_shard(ingested, plan)
    assert len(plans) > len({p.trajectories_file for p in plans})  # files of several shards
    assert reads and max(reads.values()) == 1


def test_a_replaced_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = next(p for p in sorted(SHARED.rglob("*")) if p.is_file() and p.suffix == ".jsonl")
    second = next(p for p in sorted(SHARED.rglob("*.json")) if p.is_file())
    out = tmp_path / "out"
    loaded = []
    for source in (first, second):
        run_ingest([InputSpec(source, None, {})], out, rules=EligibilityRules(), workers=1)
        plan = next(plan_shards(out, 1000))
        loaded.append(load_shard(out, plan))
        assert loaded[-1] == filtered_read(out, plan)
    assert set(loaded[0][0]) != set(loaded[1][0])


def test_last_one_holds_one_value() -> None:
    loads: list[str] = []
    cache = LastOne()

    def load(key: str) -> str:
        loads.append(key)
        return key.upper()

    answers = [cache.get(k, functools.partial(load, k)) for k in ["a", "a", "b", "b", "a"]]
    assert answers == ["A", "A", "B", "B", "A"]
    assert loads == ["a", "b", "a"]  # "a" was let go when "b" came
