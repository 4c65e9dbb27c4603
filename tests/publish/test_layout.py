"""Dataset folder layout: configs, deterministic disjoint splits, scrubbing, `load_dataset`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.errors import PublishError
from builder.publish.layout import build_dataset_folder, split_of
from builder.scrub import Scrubber

SPLITS = {"train": 0.9, "validation": 0.05, "test": 0.05}


def _rows_by_split(dest: Path, config: str) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = defaultdict(list)
    for path in sorted((dest / "data" / config).glob("*.parquet")):
        rows[path.name.split("-")[0]] += pq.read_table(path).to_pylist()
    return rows


def test_layout_has_one_folder_per_config_with_numbered_split_shards(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest, max_rows_per_shard=40, batch_size=16)
    assert sorted(p.name for p in (dest / "data").iterdir()) == [
        "candidates", "preferences", "prompt_completion", "sft",
    ]  # fmt: skip
    sft_train = sorted(p.name for p in (dest / "data" / "sft").glob("train-*.parquet"))
    assert len(sft_train) >= 2  # 40-row shards
    total = len(sft_train)
    assert sft_train == [f"train-{i:05d}-of-{total:05d}.parquet" for i in range(total)]
    assert summary.files == sorted(
        p.relative_to(dest).as_posix() for p in (dest / "data").rglob("*.parquet")
    )
    assert sorted(p.name for p in (dest / "plots").iterdir()) == [
        "compression_ratio.svg",
        "pass_rate_by_intent.svg",
    ]
    assert (dest / "README.md").read_text().startswith("---\n")
    assert not (dest / ".staging").exists()


def test_every_input_row_is_published_once_and_temp_shards_are_ignored(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest)
    inputs = {"sft": "supervision", "preferences": "preferences", "candidates": "candidates"}
    for config, table in inputs.items():
        expected = sum(
            pq.read_table(p).num_rows for p in (run_output / table).glob("shard-*.parquet")
        )
        published = _rows_by_split(dest, config)
        assert sum(len(r) for r in published.values()) == expected
        assert summary.configs[config].rows == {s: len(r) for s, r in published.items()}


def test_no_trajectory_is_in_two_splits_and_all_configs_agree(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, splits={"train": 0.6, "validation": 0.2, "test": 0.2})
    seen: dict[str, str] = {}
    for config in ("sft", "preferences", "candidates"):
        for split, rows in _rows_by_split(dest, config).items():
            for row in rows:
                assert seen.setdefault(row["trajectory_id"], split) == split
    assert len(seen) == 40
    assert set(seen.values()) == {"train", "validation", "test"}


def test_split_assignment_is_deterministic_and_follows_the_ratios() -> None:
    ids = [f"t{i}" for i in range(4000)]
    first = [split_of(i, SPLITS) for i in ids]
    assert first == [split_of(i, SPLITS) for i in ids]
    share = {s: first.count(s) / len(ids) for s in SPLITS}
    assert share["train"] == pytest.approx(0.9, abs=0.02)
    assert share["validation"] == pytest.approx(0.05, abs=0.015)
    assert share["test"] == pytest.approx(0.05, abs=0.015)
    assert [split_of(i, SPLITS, seed=1) for i in ids] != first  # the seed reshuffles
    assert {split_of(i, {"train": 1.0, "test": 0.0}) for i in ids} == {"train"}


def test_rebuilding_gives_identical_files(run_output: Path, tmp_path: Path) -> None:
    out = run_output
    first, second = tmp_path / "ds1", tmp_path / "ds2"
    build_dataset_folder(out, first, target="acme/nap")  # the card names its target
    build_dataset_folder(out, second, target="acme/nap")
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_published_files_hold_no_secret_and_redactions_are_counted(
    run_output: Path, tmp_path: Path, seeded_secret: str
) -> None:
    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest, scrubber=Scrubber())
    text = []
    for config in ("prompt_completion", "sft", "preferences", "candidates"):
        for rows in _rows_by_split(dest, config).values():
            text.append(repr(rows))
    joined = "\n".join(text)
    assert seeded_secret not in joined
    assert "[REDACTED:github_token]" in joined
    # sft prompt + sft messages + prompt_completion prompt + preferences
    assert summary.redactions == {"github_token": 160}
    assert seeded_secret not in (dest / "README.md").read_text()


def test_republishing_replaces_stale_shards(run_output: Path, tmp_path: Path) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, max_rows_per_shard=10, batch_size=10)
    many = len(list((dest / "data").rglob("*.parquet")))
    build_dataset_folder(run_output, dest)
    assert len(list((dest / "data").rglob("*.parquet"))) < many
    assert len(list((dest / "data" / "sft").glob("train-*"))) == 1


def test_missing_tables_and_missing_trajectory_id_are_clear_errors(
    tmp_path: Path, run_output_factory: Callable[..., Path]
) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PublishError, match="no Parquet shards"):
        build_dataset_folder(tmp_path / "empty", tmp_path / "ds")
    out = run_output_factory(tmp_path / "x", trajectories=3)
    for path in (out / "candidates").glob("*.parquet"):
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["trajectory_id"]), path)
    with pytest.raises(PublishError, match="trajectory_id"):
        build_dataset_folder(out, tmp_path / "ds")
    with pytest.raises(PublishError, match="sum"):
        build_dataset_folder(out, tmp_path / "ds", splits={"train": 0.5})


def test_datasets_loads_every_config_offline(
    run_output: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from datasets import load_dataset

    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest)
    for config, layout in summary.configs.items():
        loaded = load_dataset(str(dest), config, cache_dir=str(tmp_path / "cache"))
        assert {s: d.num_rows for s, d in loaded.items()} == layout.rows
        assert loaded["train"].column_names == layout.schema.names
    sft = load_dataset(str(dest), "sft", split="train", cache_dir=str(tmp_path / "cache"))
    assert sft[0]["messages"][1] == {"role": "assistant", "content": "ok"}


def test_twenty_kinds_of_secrets_never_reach_published_files(tmp_path: Path) -> None:
    from tests.scrub.corpus import SEEDED

    out = tmp_path / "out"
    (out / "supervision").mkdir(parents=True)
    rows = [
        {
            "trajectory_id": f"t{i}",
            "prompt": template.format(v=value),
            "target": '{"type": "unchanged"}',
            "messages": [{"role": "user", "content": f"observation:\n{template.format(v=value)}"}],
        }
        for i, (_, value, template) in enumerate(SEEDED)
    ]
    pq.write_table(pa.Table.from_pylist(rows), out / "supervision" / "shard-00000.parquet")
    dest = tmp_path / "ds"
    summary = build_dataset_folder(out, dest, splits={"train": 0.5, "test": 0.5})
    published = [_strings(pq.read_table(p).to_pylist()) for p in (dest / "data").rglob("*.parquet")]
    published.append((dest / "README.md").read_text())
    assert any(
        "-----BEGIN RSA" in text for text in _strings(rows).split("\0")
    )  # walker sees raw text
    leaked = [value for _, value, _ in SEEDED if any(value in text for text in published)]
    assert leaked == []
    assert len(summary.redactions) >= 20
    # sft: prompt and messages; prompt_completion: prompt (its `messages` is not published)
    assert sum(summary.redactions.values()) == 3 * len(SEEDED)


def _strings(value: object) -> str:
    """Every string inside read-back rows, unescaped, joined by NUL."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\0".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\0".join(_strings(v) for v in value)
    return ""


def test_an_empty_table_is_left_out_and_the_rest_still_loads(
    run_output: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from datasets import load_dataset

    for path in (run_output / "preferences").glob("shard-*.parquet"):
        pq.write_table(pq.read_table(path).slice(0, 0), path)
    dest = tmp_path / "ds"
    summary = build_dataset_folder(run_output, dest)
    assert summary.empty_configs == ["preferences"]
    assert sorted(summary.configs) == ["candidates", "prompt_completion", "sft"]
    assert not (dest / "data" / "preferences").exists()
    assert "no rows for them: `preferences`" in (dest / "README.md").read_text()
    loaded = load_dataset(str(dest), "sft", cache_dir=str(tmp_path / "cache"))
    assert loaded["train"].num_rows == summary.configs["sft"].rows["train"]
