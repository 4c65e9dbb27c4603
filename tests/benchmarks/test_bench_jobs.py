"""The pieces of the whole-run benches that decide what is measured and how it is judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchmarks.bench_run import verdict
from benchmarks.bench_scale import memory, shard_progress, verdicts
from benchmarks.bench_side_by_side import STEPS_PER_COPY, distinct_copies, openai_overrides
from benchmarks.tree_memory import Sample
from builder.config import load_config
from builder.ingest.parallel import InputSpec, run_ingest

MIB = 2**20


def test_the_run_bench_holds_its_ratio_to_four_of_five_repeats() -> None:
    runs = [{"run_ratio_to_floor": r, "saturated_in_flight_fraction": 0.97}
            for r in (1.2, 1.2, 1.2, 1.3, 1.3)]  # fmt: skip
    ratio, flight = verdict(runs, 320)
    assert ratio["target"] == "run 320 steps: whole run / floor"
    assert (ratio["median"], ratio["repeats_met"], ratio["met"]) == (1.2, 3, False)
    assert flight["met"]


def test_progress_is_the_sum_of_the_finished_shards_eligible_steps(tmp_path: Path) -> None:
    shards = tmp_path / "_state" / "shards"
    done = shard_progress(tmp_path)
    assert done() == 0  # no folder yet
    shards.mkdir(parents=True)
    (shards / "a.json").write_text(json.dumps({"eligible_steps": 16}))
    (shards / "b.json").write_text(json.dumps({"eligible_steps": 4}))
    (shards / "c.json").write_text("{")  # being written elsewhere: read next time
    assert done() == 20
    (shards / "c.json").write_text(json.dumps({"eligible_steps": 8}))
    assert done() == 28


def test_memory_is_flat_when_the_last_window_peaks_near_the_first() -> None:
    rows = [(200, 600), (1200, 610), (4900, 660), (5000, 200)]
    figures = memory([Sample(k, d, m * MIB) for k, (d, m) in enumerate(rows)], 5000)
    assert figures["rss_by_steps_mib"] == {"1000": 600.0, "2000": 610.0, "5000": 660.0}
    assert figures["flat_ratio"] == 1.1


def _scale_run(**changes: Any) -> dict[str, Any]:
    return {"eligible_steps": 5000, "run_ratio_to_floor": 1.1, "peak_rss_gib": 1.2,
            "flat_ratio": 1.25, **changes}  # fmt: skip


def test_the_scale_targets_meet_at_their_limits_and_fail_past_them() -> None:
    assert [v["met"] for v in verdicts([_scale_run()])] == [True, True, True]
    over = verdicts([_scale_run(run_ratio_to_floor=1.11, peak_rss_gib=1.5, flat_ratio=None)])
    assert [v["met"] for v in over] == [False, False, False]
    assert not verdicts([_scale_run(flat_ratio=1.26)])[2]["met"]
    assert over[2]["target"] == "scale: RSS at 5000 / at 1000 steps"


def test_side_by_side_copies_are_distinct_tasks_for_the_teacher(tmp_path: Path) -> None:
    corpus = distinct_copies(tmp_path / "corpus", 3)
    total = run_ingest([InputSpec(str(corpus))], tmp_path / "out", workers=1).total
    assert total.eligible == STEPS_PER_COPY * 3
    tasks = [t for f in (tmp_path / "out/trajectories").glob("*.parquet")
             for t in pq.read_table(f, columns=["task"]).column("task").to_pylist()]  # fmt: skip
    assert len(tasks) == 6 and len(set(tasks)) == 6


def test_the_side_by_side_overrides_move_only_endpoints_inputs_output_and_rate_limits(
    tmp_path: Path,
) -> None:
    from benchmarks.bench_side_by_side import OPENAI

    sets = openai_overrides(tmp_path / "in", tmp_path / "out", "http://t/v1", "http://a/v1")
    shipped, moved = load_config(OPENAI), load_config(OPENAI, overrides=sets)
    assert (moved.teacher.base_url, moved.agent.base_url) == ("http://t/v1", "http://a/v1")
    assert moved.limits.requests_per_minute is None and moved.limits.tokens_per_minute is None
    assert moved.limits.concurrency == shipped.limits.concurrency == 32
    assert moved.teacher.samples == shipped.teacher.samples
    assert moved.gate == shipped.gate and moved.references == shipped.references
