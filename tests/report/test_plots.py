"""Report plots: the exact data behind each plot, and real SVG files read back, empty or not."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from builder.report.plots import (
    compression_ratios,
    first_word,
    pass_rates_by_intent,
    tokens_saved_per_trajectory,
    write_plots,
)
from schemas.common import to_table
from schemas.judgements import JUDGEMENT_SCHEMA, JudgementRecord
from schemas.steps import STEP_SCHEMA, Action, StepRecord
from schemas.supervision import SUPERVISION_SCHEMA, SupervisionRecord
from tests.report.svg.svg_read import bars, parse, texts
from tests.run.nap_server import nap_server, replicate_samples, run_config

PLOTS = ("compression_ratio.svg", "pass_rate_by_intent.svg", "tokens_saved_per_trajectory.svg")


def _write(out: Path, table: str, records: list, schema) -> None:
    (out / table).mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(records, schema), out / table / "part-0000.parquet")


def _step(tid: str, index: int, command: str | None) -> StepRecord:
    action = Action("bash", "{}", command, command or "")
    return StepRecord(tid, index, 0, 1, "fmt", "harness", action=action, eligible=True)


def _judge(tid: str, step: int, cand: int, passed: bool) -> JudgementRecord:
    return JudgementRecord(tid, step, cand, cand, "agent", "reply", passed=passed)


def _sup(tid: str, step: int, rank: int, raw: int, rendered: int, fallback: bool = False):
    return SupervisionRecord(
        tid,
        step,
        rank,
        rank,
        "teacher",
        "sys",
        "prompt",
        "{}",
        raw_tokens=raw,
        rendered_tokens=rendered,
        is_fallback=fallback,
    )


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    steps = [
        _step("a", 0, "cat src/app.py"),
        _step("a", 1, "pytest -q tests/"),
        _step("b", 0, "/usr/bin/cat README.md"),
        _step("b", 1, None),
    ]
    _write(tmp_path, "steps", steps, STEP_SCHEMA)
    judgements = [
        _judge("a", 0, 0, True),
        _judge("a", 0, 1, False),
        _judge("a", 1, 0, False),
        _judge("b", 0, 0, True),
        _judge("b", 1, 0, True),
    ]
    _write(tmp_path, "judgements", judgements, JUDGEMENT_SCHEMA)
    supervision = [
        _sup("a", 0, 0, 1000, 250),
        _sup("a", 0, 1, 1000, 500),
        _sup("b", 0, 0, 400, 100),
        _sup("b", 1, 0, 300, 300, fallback=True),
    ]
    _write(tmp_path, "supervision", supervision, SUPERVISION_SCHEMA)
    return tmp_path


def test_first_word_is_the_program_name() -> None:
    assert first_word("/usr/bin/grep -rn foo .") == "grep"
    assert first_word("  ls -la") == "ls"
    assert first_word(None) == "none"
    assert first_word("   ") == "none"


def test_compression_ratios_cover_selected_rows_but_not_fallbacks(out_dir: Path) -> None:
    assert sorted(compression_ratios(out_dir)) == pytest.approx([0.25, 0.25, 0.5])


def test_pass_rates_group_judgements_by_the_steps_command_intent(out_dir: Path) -> None:
    assert pass_rates_by_intent(out_dir) == {"cat": (2, 3), "none": (1, 1), "pytest": (0, 1)}


def test_pass_rates_use_the_given_intent_classifier(out_dir: Path) -> None:
    seen: list[str | None] = []

    def intent_of(command: str | None) -> str:
        seen.append(command)
        return "run" if command and command.startswith("pytest") else "read"

    assert pass_rates_by_intent(out_dir, intent_of) == {"read": (3, 4), "run": (0, 1)}
    assert sorted(seen, key=str) == sorted(
        ["cat src/app.py", "pytest -q tests/", "/usr/bin/cat README.md", None], key=str
    )


def test_tokens_saved_sums_the_shortest_selection_per_trajectory(out_dir: Path) -> None:
    assert tokens_saved_per_trajectory(out_dir) == {"a": 750, "b": 300}


def test_write_plots_draws_three_svg_files_from_the_tables(out_dir: Path) -> None:
    paths = write_plots(out_dir)
    assert [p.name for p in paths] == list(PLOTS)
    assert all(path.parent == out_dir / "plots" for path in paths)
    assert not [p for p in (out_dir / "plots").iterdir() if p.name.startswith(".")]
    ratios, rates, saved = (parse(path) for path in paths)

    ratio_bars = bars(ratios)  # ratios 0.25, 0.25, 0.5 in 20 bins over [0, 1]
    assert [b.tip for b in ratio_bars] == ["0.25 to 0.3: 2", "0.5 to 0.55: 1"]
    assert ratio_bars[0].height == pytest.approx(2 * ratio_bars[1].height, abs=0.01)
    assert texts(ratios, "title") == ["Compression ratio of selected rows (n=3)"]

    rate_bars = bars(rates)  # cat 2/3, none 1/1, pytest 0/1
    assert [b.tip for b in rate_bars] == ["cat: 2/3", "none: 1/1", "pytest: 0/1"]
    assert rate_bars[0].height == pytest.approx(rate_bars[1].height * 2 / 3, abs=0.01)
    assert rate_bars[2].height == 0

    saved_bars = bars(saved)  # a saved 750, b saved 300
    assert [b.tip for b in saved_bars] == ["a: 750", "b: 300"]
    assert saved_bars[1].height == pytest.approx(saved_bars[0].height * 300 / 750, abs=0.01)
    assert texts(saved, "title") == ["Tokens saved per trajectory (total 1,050)"]


def test_write_plots_says_no_data_for_empty_tables(tmp_path: Path) -> None:
    paths = write_plots(tmp_path)
    assert [p.name for p in paths] == list(PLOTS)
    for path in paths:
        root = parse(path)
        assert texts(root, "no-data") == ["no data"] and not bars(root)
        assert texts(root, "title") == [path.stem.replace("_", " ")]


def test_many_trajectories_switch_to_a_histogram(tmp_path: Path) -> None:
    rows = [_sup(f"t{i:03d}", 0, 0, 1000, 10 * i) for i in range(60)]
    _write(tmp_path, "supervision", rows, SUPERVISION_SCHEMA)
    saved = tokens_saved_per_trajectory(tmp_path)
    assert len(saved) == 60 and saved["t000"] == 1000 and next(iter(saved)) == "t000"
    drawn = bars(parse(write_plots(tmp_path)[2]))
    assert len(drawn) == 30  # 60 evenly spread values in 30 bins: two per bin
    assert {b.tip.rsplit(": ", 1)[1] for b in drawn} == {"2"}


def test_a_run_writes_its_plots_as_svg_matching_its_tables(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    out = tmp_path / "out"
    config = tmp_path / "run.yaml"
    with nap_server() as server:
        config.write_text(run_config(corpus, server.base_url, out))
        done = subprocess.run(
            [sys.executable, "-m", "builder.cli", "run", str(config)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (out / "plots").iterdir()) == sorted(PLOTS)
    ratios, rates, saved = (parse(out / "plots" / name) for name in PLOTS)
    supervision = pl.read_parquet(out / "supervision" / "*.parquet")
    judged = pl.read_parquet(out / "judgements" / "*.parquet").filter(~pl.col("is_control"))
    assert judged.height > 0 and supervision.height > 0

    def counted(root: ET.Element) -> list[int]:
        return [int(b.tip.rsplit(": ", 1)[1].split("/")[-1]) for b in bars(root)]

    assert sum(counted(ratios)) == supervision.filter(~pl.col("is_fallback")).height
    assert sum(counted(rates)) == judged.height  # "intent: passed/judged" per bar
    assert len(bars(saved)) == supervision["trajectory_id"].n_unique()
