"""Targets judged over repeats, and the one table `make bench` ends with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.verdicts import Target, judge, render

RATIO = Target("run 320 steps: whole run / floor", "<=", 1.25, of=(4, 5))
MEDIAN = Target("side by side 200 steps: whole run / floor", "<=", 1.35)
PEAK = Target("scale: peak RSS", "<", 1.5, "GiB")
IN_FLIGHT = Target("run: in flight", ">=", 0.95, "%")


def test_a_repeat_exactly_at_a_ratio_target_meets_it() -> None:
    verdict = judge(MEDIAN, [1.35, 1.35, 1.36])
    assert verdict["repeats_met"] == 2
    assert verdict["median"] == 1.35
    assert verdict["met"]


def test_a_value_exactly_at_an_under_target_does_not_meet_it() -> None:
    assert not judge(PEAK, [1.5])["met"]
    assert judge(PEAK, [1.49])["met"]


def test_four_of_five_repeats_meet_the_run_target() -> None:
    verdict = judge(RATIO, [1.2, 1.3, 1.25, 1.1, 1.24])
    assert (verdict["repeats_met"], verdict["repeats"], verdict["met"]) == (4, 5, True)
    assert verdict["rule"] == "4 of 5 repeats"


def test_three_of_five_fail_the_run_target_even_with_the_median_under_it() -> None:
    verdict = judge(RATIO, [1.2, 1.2, 1.2, 1.3, 1.3])
    assert verdict["median"] <= 1.25
    assert verdict["repeats_met"] == 3
    assert not verdict["met"]


def test_the_share_of_repeats_is_rounded_up_for_other_repeat_counts() -> None:
    assert [RATIO.needed(n) for n in (1, 2, 3, 5, 10)] == [1, 2, 3, 4, 8]
    assert not judge(RATIO, [1.2, 1.2, 1.3])["met"]  # 2 of 3 is short of 4/5


def test_a_median_target_is_read_on_the_median_not_on_every_repeat() -> None:
    verdict = judge(MEDIAN, [1.2, 1.3, 2.0])
    assert verdict["met"] and verdict["repeats_met"] == 2
    assert not judge(MEDIAN, [1.2, 1.4, 2.0])["met"]


def test_an_at_least_target_meets_from_the_limit_up() -> None:
    assert judge(IN_FLIGHT, [0.95])["met"]
    assert not judge(IN_FLIGHT, [0.949])["met"]


def _bench_file(folder: Path, name: str, verdicts: list[dict[str, Any]], **machine: Any) -> None:
    stamp = {"cpu_model": "Test CPU 9000", "cores": 2, "loadavg_1m_before": 0.3,
             "loadavg_1m_after": 0.5, "finished": "2026-01-02 03:04", **machine}  # fmt: skip
    figures = {"verdicts": verdicts, "machine": stamp}
    (folder / f"{name}.json").write_text(json.dumps(figures))


def test_the_table_shows_every_target_with_its_median_repeats_and_verdict(tmp_path: Path) -> None:
    _bench_file(tmp_path, "run", [judge(RATIO, [1.2, 1.3, 1.25, 1.1, 1.24])])
    _bench_file(tmp_path, "ray", [judge(Target("ray / local", "<=", 1.5), [1.8])])
    (tmp_path / "ingest.json").write_text(json.dumps({"mb_per_s": 40}))  # no verdicts: left out
    (tmp_path / "broken.json").write_text("{")
    table = render(tmp_path)
    lines = table.splitlines()
    assert lines[0] == "CPU: Test CPU 9000 (2 cores)"
    run = next(line for line in lines if line.startswith("run 320 steps"))
    assert "<= 1.25x" in run and "1.24x" in run and "4/5" in run and " met " in run
    assert "0.3 -> 0.5" in run and "2026-01-02 03:04" in run
    ray = next(line for line in lines if line.startswith("ray / local"))
    assert "1.80x" in ray and "0/1" in ray and "NOT MET" in ray
    assert lines.index(run) < lines.index(ray)  # issue 31's order: run before ray
    assert lines[-1] == "1 of 2 targets met"
    assert "ingest" not in table


def test_the_table_says_when_its_files_come_from_different_machines(tmp_path: Path) -> None:
    _bench_file(tmp_path, "run", [judge(MEDIAN, [1.0])])
    _bench_file(tmp_path, "scale", [judge(PEAK, [0.7])], cpu_model="Other CPU")
    first = render(tmp_path).splitlines()[0]
    assert "Test CPU 9000" in first and "Other CPU" in first and "NOT one machine" in first


def test_an_empty_bench_folder_says_how_to_fill_it(tmp_path: Path) -> None:
    assert "make bench" in render(tmp_path)
