"""The dataset card: a YAML header matching the files on disk, and a body with the run's facts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from builder.publish.card import CardInputs, build_card, builder_version, size_category
from builder.publish.layout import ConfigLayout, build_dataset_folder


def _header(card: str) -> dict:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_header_declares_every_config_and_split_on_disk(run_output: Path, tmp_path: Path) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, license="cc-by-4.0", repo_id="acme/nap")
    header = _header((dest / "README.md").read_text())
    on_disk = {(p.parent.name, p.name.split("-")[0]) for p in (dest / "data").rglob("*.parquet")}
    declared = set()
    for config in header["configs"]:
        for entry in config["data_files"]:
            matched = list(dest.glob(entry["path"]))
            assert matched, entry
            assert {m.parent.name for m in matched} == {config["config_name"]}
            declared.add((config["config_name"], entry["split"]))
    assert declared == on_disk
    assert header["license"] == "cc-by-4.0"
    assert header["task_categories"] == ["text-generation"]
    assert header["size_categories"] == ["n<1K"]
    assert [c["config_name"] for c in header["configs"] if c.get("default")] == ["sft"]


def test_features_and_split_sizes_match_the_parquet_files(run_output: Path, tmp_path: Path) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest)
    header = _header((dest / "README.md").read_text())
    for info in header["dataset_info"]:
        folder = dest / "data" / info["config_name"]
        schema = pq.read_schema(next(folder.glob("*.parquet")))
        assert [f["name"] for f in info["features"]] == schema.names
        for split in info["splits"]:
            rows = sum(pq.read_metadata(p).num_rows for p in folder.glob(f"{split['name']}-*"))
            assert split["num_examples"] == rows
    sft = next(i for i in header["dataset_info"] if i["config_name"] == "sft")
    messages = next(f for f in sft["features"] if f["name"] == "messages")
    assert messages["list"] == [
        {"name": "role", "dtype": "string"},
        {"name": "content", "dtype": "string"},
    ]


def test_body_reports_statistics_plots_models_and_versions(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, repo_id="acme/nap")
    body = (dest / "README.md").read_text().split("\n---\n", 1)[1]
    for expected in (
        "| totals.eligible_steps | 120 |",
        "| compression.ratio_mean | 0.42 |",
        "![compression ratio](plots/compression_ratio.png)",
        "**Teacher model**: `gpt-teacher-x`",
        "**Agent model**: `agent-model-y`",
        "**Prompt version**: `compressor-v3`",
        "**Config hash**: `abc123def456`",
        f"**Builder version**: `{builder_version()}`",
        'load_dataset("acme/nap", "sft")',
        'load_dataset("acme/nap", "candidates")',
        "| published_redactions.github_token | 120 |",
        "carry their own licences",
    ):
        assert expected in body, expected
    for plot in ("plots/compression_ratio.png", "plots/pass_rate_by_intent.png"):
        assert (dest / plot).is_file()


def test_card_builds_without_report_or_resolved_config() -> None:
    layout = ConfigLayout(
        "sft",
        pa.schema([("trajectory_id", pa.string()), ("n", pa.int64())]),
        {"train": 12_345},
        {"train": ["data/sft/train-00000-of-00001.parquet"]},
    )
    card = build_card(CardInputs(configs={"sft": layout}, builder_version="9.9"))
    header = _header(card)
    assert header["size_categories"] == ["10K<n<100K"]
    assert header["configs"][0]["data_files"] == [
        {"split": "train", "path": "data/sft/train-*.parquet"}
    ]
    assert "## Statistics" not in card and "## Plots" not in card
    assert "**Builder version**: `9.9`" in card
    assert 'load_dataset("ORG/NAME", "sft")' in card


@pytest.mark.parametrize(
    ("rows", "category"),
    [(0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (250_000, "100K<n<1M"), (2 * 10**9, "n>1B")],
)
def test_size_category_follows_the_hub_buckets(rows: int, category: str) -> None:
    assert size_category(rows) == category
