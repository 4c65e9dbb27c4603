"""Rounds merged into one dataset: an offline run (round 0) and a prefix-compressed run
(round 1) of the same samples published together, loaded back with `datasets`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from builder.cli import main
from builder.errors import PublishError
from builder.publish.merge_runs import merge_runs
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config

ROUND_1 = {"prefix": "compressed", "prefix_compressor": "rule:head_tail"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("rounds")
    outs = []
    with nap_server() as server:
        for name, extra in (("round0", {}), ("round1", {"replay": ROUND_1})):
            config = tmp / f"{name}.yaml"
            config.write_text(run_config(SAMPLES, server.base_url, tmp / name, **extra))
            assert main(["run", str(config)]) == 0
            outs.append(tmp / name)
    return outs[0], outs[1]


def _keys(out: Path) -> list[tuple[str, int, str]]:
    frame = pl.read_parquet(out / "supervision" / "*.parquet")
    return [(r["trajectory_id"], r["step_index"], r["target"]) for r in frame.to_dicts()]


def test_a_merged_publish_of_two_rounds_loads_with_both_rounds_and_no_duplicate_rows(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    round0, round1 = runs
    first, second = _keys(round0), _keys(round1)
    fresh = [k for k in second if k not in set(first)]
    assert fresh and len(fresh) < len(second), "the rounds must share some rows and differ in some"
    dest = tmp_path / "dataset"
    # given in the other order: the earliest round still wins the shared rows
    assert main(["publish", str(round1), str(round0), "--to", str(dest)]) == 0

    splits = load_dataset(str(dest), "prompt_completion", cache_dir=str(tmp_path / "cache"))
    rows = [row for split in splits.values() for row in split]
    by_round = {r: sum(row["round"] == r for row in rows) for r in (0, 1)}
    assert by_round == {0: len(first), 1: len(fresh)}
    keys = [(row["trajectory_id"], row["step_index"], row["target"]) for row in rows]
    assert len(keys) == len(set(keys)) == len(set(first) | set(second))
    assert {row["prefix_mode"] for row in rows if row["round"] == 1} == {"compressed"}
    candidates = load_dataset(str(dest), "candidates", cache_dir=str(tmp_path / "cache"))
    rounds_seen = {row["round"] for split in candidates.values() for row in split}
    assert rounds_seen == {0, 1}  # every round's verdicts are kept

    card = (dest / "README.md").read_text()
    section = card[card.index("## Rounds") :].split("\n## ")[0]
    assert f"| 0 | raw (offline) | `{(round0 / 'config.hash').read_text().strip()}` |" in section
    assert f"| {len(first)} |" in section and f"| {len(fresh)} |" in section
    assert "compressed by `rule:head_tail`" in section
    stats = json.loads((dest / "statistics.json").read_text())
    assert [r["round"] for r in stats["rounds"]] == [0, 1]
    assert stats["rounds"][1]["duplicates"]["supervision"] == len(second) - len(fresh)
    assert str(tmp_path) not in card and str(round0.parent) not in card


def test_one_offline_run_publishes_without_a_rounds_section(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    assert main(["publish", str(runs[0]), "--to", str(tmp_path / "d")]) == 0
    assert "## Rounds" not in (tmp_path / "d" / "README.md").read_text()


def test_the_same_folder_twice_is_refused(runs: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(PublishError, match="twice"):
        merge_runs([runs[0], runs[0]], tmp_path / "merged")
