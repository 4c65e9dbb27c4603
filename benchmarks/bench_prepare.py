"""Shard preparation (load + scrub, `prepare_shard`) against a floor measured in the same run.

The job is bench_run's: `--copies` variants of each project sample, ingested, then cut into
shards of `--shard-size` trajectories. The floor reads every ingest file once, whole, and
turns it into Python rows: what any loader must at least do. Measured (CPU seconds, best of
`--repeat`, over every shard):
- `filtered_read`: each shard read with row filters from its trajectories file and every
  steps file of its task (how `load_shard` read before: the pyarrow dataset path per shard);
- `load_shard`: the shards sliced from their files, each file read once;
- `scrub`: scrubbing the shard's trajectories and steps (`Scrubber`, one per shard);
- `prepare_shard`: load, scrub and jobs, as the run does in its worker thread;
- `arrow_peak_mb`: Arrow memory held while loading every shard, next to the largest single
  ingest file's table: the cache holds one file of each kind, never the whole folder.

    python benchmarks/bench_prepare.py [--copies 40] [--shard-size 4]

Writes .bench/prepare.json. Target: `load_shard` within 4x the floor (it also builds the
typed records, which the floor does not); the per-shard filtered read it replaced measured
16-27x here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from builder.ingest.parallel import InputSpec, run_ingest  # noqa: E402
from builder.run.shard_tables import SHARD_TABLES  # noqa: E402
from builder.run.shard_work import ScrubSettings, prepare_shard  # noqa: E402
from builder.run.shards import ShardPlan, load_shard, plan_shards  # noqa: E402
from builder.scrub import Scrubber  # noqa: E402
from schemas.common import from_row  # noqa: E402
from schemas.steps import StepRecord  # noqa: E402
from schemas.trajectories import TrajectoryRecord  # noqa: E402
from tests.run.nap_server import replicate_samples  # noqa: E402

BENCH = ROOT / ".bench"


def filtered_read(out: Path, plan: ShardPlan) -> tuple[dict[str, Any], list[StepRecord]]:
    """The former `load_shard`: one filtered read of each file per shard."""
    wanted = list(plan.trajectory_ids)
    table = pq.read_table(plan.trajectories_file, filters=[("trajectory_id", "in", wanted)])
    trajectories = {r["trajectory_id"]: from_row(TrajectoryRecord, r) for r in table.to_pylist()}
    steps: list[StepRecord] = []
    for path in sorted((out / "steps").glob(f"{plan.task_prefix}-*.parquet")):
        rows = pq.read_table(
            path, filters=[("trajectory_id", "in", wanted), ("eligible", "=", True)]
        ).to_pylist()
        steps += [from_row(StepRecord, r) for r in rows]
    return trajectories, steps


def floor(out: Path) -> None:
    for folder in ("trajectories", "steps"):
        for path in sorted((out / folder).glob("*.parquet")):
            pq.ParquetFile(path).read().to_pylist()


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        SHARD_TABLES.clear()  # every repeat reads the files again
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def scrub_all(loaded: list[tuple[dict[str, TrajectoryRecord], list[StepRecord]]]) -> None:
    for trajectories, steps in loaded:
        scrubber = Scrubber()
        wanted = {s.trajectory_id for s in steps}
        [scrubber.scrub_trajectory(t) for k, t in trajectories.items() if k in wanted]
        [scrubber.scrub_step(s) for s in steps]


def arrow_peak(out: Path, plans: list[ShardPlan]) -> tuple[float, float]:
    """(most Arrow memory held while loading every shard, largest single file's table), MB."""
    SHARD_TABLES.clear()
    base = pa.total_allocated_bytes()
    peak = 0
    for plan in plans:
        load_shard(out, plan)
        peak = max(peak, pa.total_allocated_bytes() - base)
    largest = max(
        pq.ParquetFile(p).read().nbytes
        for folder in ("trajectories", "steps")
        for p in (out / folder).glob("*.parquet")
    )
    return peak / 1e6, largest / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--shard-size", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    load_before = load_1m()
    work = BENCH / "prepare"
    shutil.rmtree(work, ignore_errors=True)
    corpus = replicate_samples(work / "corpus", args.copies)
    out = work / "out"
    run_ingest([InputSpec(str(corpus))], out, workers=1)
    plans = list(plan_shards(out, args.shard_size))
    load_shard(out, plans[0])  # first-use imports and tokenizer out of the timings
    floor_s = best_of(lambda: floor(out), args.repeat)
    loaded = [load_shard(out, p) for p in plans]
    timings = {
        "filtered_read": best_of(lambda: [filtered_read(out, p) for p in plans], args.repeat),
        "load_shard": best_of(lambda: [load_shard(out, p) for p in plans], args.repeat),
        "scrub": best_of(lambda: scrub_all(loaded), args.repeat),
        "prepare_shard": best_of(
            lambda: [prepare_shard(out, p, ScrubSettings()) for p in plans], args.repeat
        ),
    }
    peak, largest = arrow_peak(out, plans)
    result: dict[str, Any] = {
        "shards": len(plans),
        "steps": sum(len(s) for _, s in loaded),
        "text_mb": round(
            sum(len(s.observation) for _, steps in loaded for s in steps) / 1e6
            + sum(
                len(m.content or "")
                for trajectories, _ in loaded
                for t in trajectories.values()
                for m in t.messages
            )
            / 1e6,
            2,
        ),
        "floor_s": round(floor_s, 4),
        **{f"{k}_s": round(v, 4) for k, v in timings.items()},
        **{f"{k}_x_floor": round(v / floor_s, 2) for k, v in timings.items()},
        "arrow_peak_mb": round(peak, 2),
        "largest_file_table_mb": round(largest, 2),
    }
    write("prepare", result, load_before)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
