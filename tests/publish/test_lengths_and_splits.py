"""Token lengths, `--max-tokens` and split warnings of a published folder."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from builder.cli import main
from builder.publish.layout import build_dataset_folder
from builder.publish.lengths import ESTIMATE_MARGIN, LONG_CONTEXT, percentile, recommend

TRAINING = ("prompt_completion", "sft", "preferences")


def _rows(dest: Path, config: str) -> pl.DataFrame:
    frames = []
    for path in sorted((dest / "data" / config).glob("*.parquet")):
        frames.append(
            pl.read_parquet(path).with_columns(pl.lit(path.name.split("-")[0]).alias("split"))
        )
    return pl.concat(frames)


def test_a_covering_max_length_or_a_filter_above_long_contexts() -> None:
    assert recommend([], exact=True) is None
    exact = recommend([100, 900, 1_500], exact=True)
    assert exact is not None and (exact.max_length, exact.filter_above) == (1_536, None)
    estimate = recommend([100, 900, 1_500], exact=False)
    assert estimate is not None and estimate.max_length == 1_920  # 1,500 x 1.25 rounded to 64
    lengths = [1_000] * 199 + [60_000]  # one very long row: filtered, not covered
    long = recommend(lengths, exact=True)
    assert long is not None and long.max_length == 1_024 and long.filter_above == 1_024
    assert long.rows_over == 1
    assert percentile([5, 1, 3], 50) == 3 and percentile([7], 99) == 7
    huge = recommend([40_000] * 10, exact=False)
    assert huge is not None and huge.max_length == LONG_CONTEXT
    assert huge.filter_above == int(LONG_CONTEXT / ESTIMATE_MARGIN) and huge.rows_over == 10


def test_lengths_are_in_every_training_row_and_max_tokens_drops_longer_ones_per_split(
    run_output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full"
    build_dataset_folder(run_output, full, splits={"train": 0.5, "test": 0.5})
    sequences = {c: _rows(full, c) for c in TRAINING}
    for rows in sequences.values():
        assert rows["sequence_length"].null_count() == 0 and rows["sequence_length"].min() > 0
    pc = sequences["prompt_completion"]
    assert (pc["prompt_length"] + pc["completion_length"] == pc["sequence_length"]).all()
    limit = int(pc["sequence_length"].median())
    resolved = {"publish": {"splits": {"train": 0.5, "test": 0.5}}}
    (run_output / "config.resolved.yaml").write_text(json.dumps(resolved))
    cut = tmp_path / "cut"
    argv = ["publish", str(run_output), "--to", str(cut), "--max-tokens", str(limit)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    statistics = json.loads((cut / "statistics.json").read_text())
    for config, rows in sequences.items():
        over = rows.filter(pl.col("sequence_length") > limit)
        expected = dict(over.group_by("split").len().iter_rows())
        if over.height == rows.height:  # every row too long: the config is left out, and said
            assert not (cut / "data" / config).exists()
            assert config in statistics["empty_configs"]
            continue
        kept = _rows(cut, config)
        assert kept["sequence_length"].max() <= limit
        assert kept.height == rows.height - over.height
        assert statistics["configs"][config]["lengths"]["dropped_by_max_tokens"] == expected
        if expected:
            parts = ", ".join(f"{s} {expected[s]}" for s in ("train", "test") if s in expected)
            assert f"{config}: left out by max_tokens: {parts} rows" in printed
    assert _rows(cut, "candidates").height == _rows(full, "candidates").height  # not training
    assert f"Published with `--max-tokens {limit}`" in (cut / "README.md").read_text()


def test_uneven_or_tiny_splits_are_warned_in_the_output_and_the_card(
    run_output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest, splits={"train": 0.2, "test": 0.8})
    rows = summary.configs["prompt_completion"].rows
    share = rows["train"] / sum(rows.values())
    assert share < 0.5
    card = (dest / "README.md").read_text()
    train_warning = f"`train` holds {rows['train']} of {sum(rows.values())} `prompt_completion`"
    assert any(w.startswith(train_warning) for w in summary.warnings)
    assert train_warning in card
    assert json.loads((dest / "statistics.json").read_text())["splits"]["warnings"] == (
        summary.warnings
    )
    even = build_dataset_folder(run_output, tmp_path / "even", splits={"train": 1.0})
    assert even.warnings == []
    small = build_dataset_folder(run_output, tmp_path / "small")  # 40 trajectories, 5% each
    per_split: dict[str, int] = {}
    for split in small.split_of_trajectory.values():
        per_split[split] = per_split.get(split, 0) + 1
    tiny = [s for s in ("validation", "test") if per_split.get(s, 0) < 5]
    assert tiny and all(any(w.startswith(f"`{s}`:") for w in small.warnings) for s in tiny)
    assert main(["publish", str(run_output), "--to", str(tmp_path / "cli")]) == 0
    assert "warning: `validation`" in capsys.readouterr().out


def test_a_tokenizer_that_cannot_be_loaded_offline_is_refused_clearly(
    run_output: Path, tmp_path: Path
) -> None:
    from builder.errors import PublishError

    with pytest.raises(PublishError, match="cannot load it from local files"):
        build_dataset_folder(run_output, tmp_path / "ds", tokenizer=str(tmp_path / "missing"))
    assert not (tmp_path / "ds" / "data").exists()
