"""The dataset card: a YAML header matching the files on disk, and a body with the run's facts."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from builder.errors import PublishError
from builder.publish.card import build_card, size_category
from builder.publish.card_inputs import CardInputs, ConfigLayout, builder_version
from builder.publish.layout import build_dataset_folder
from builder.publish.licences import HUB_LICENSES
from tests.paths import REPO
from tests.publish.publish_fixtures import make_real_run_output


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
    assert [c["config_name"] for c in header["configs"] if c.get("default")] == [
        "prompt_completion"
    ]


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
        "| eligible steps | 120 |",
        "| trajectories | 40 |",
        "[`statistics.json`](statistics.json)",
        "![compression ratio](plots/compression_ratio.svg)",
        "**Teacher**: `gpt-teacher-x`",
        "**Agent**: `agent-model-y`",
        "**Prompt version**: `compressor-v3`",
        "**Config hash**: `abc123def456`",
        f"**Builder version**: `{builder_version()}`",
        'load_dataset("acme/nap", "sft")',
        'load_dataset("acme/nap", "candidates")',
        "| github_token | 0 | 160 |",
        "carry their own licences",
    ):
        assert expected in body, expected
    for plot in ("plots/compression_ratio.svg", "plots/pass_rate_by_intent.svg"):
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


def _card_data(card: str):  # returns a huggingface_hub DatasetCardData
    from huggingface_hub import DatasetCard

    return DatasetCard(card).data


@pytest.mark.parametrize("licence", sorted(HUB_LICENSES))
def test_every_licence_choice_passes_the_hub_card_parsing(licence: str) -> None:
    layout = ConfigLayout(
        "sft", pa.schema([("trajectory_id", pa.string())]), {"train": 3},
        {"train": ["data/sft/train-00000-of-00001.parquet"]},
    )  # fmt: skip
    extra = {"license_name": "nap-data-licence", "license_link": "LICENSE.md"}
    inputs = CardInputs(configs={"sft": layout}, license=licence, **extra)
    data = _card_data(build_card(inputs))
    assert data.license == licence
    if licence == "other":
        assert (data.license_name, data.license_link) == ("nap-data-licence", "LICENSE.md")
    else:
        assert data.to_dict().get("license_name") is None
    data.to_yaml()  # round-trips


def test_licences_the_hub_rejects_fail_before_anything_is_written(
    run_output: Path, tmp_path: Path
) -> None:
    with pytest.raises(PublishError, match="license_name"):
        build_dataset_folder(run_output, tmp_path / "ds", license="other")
    with pytest.raises(PublishError, match="not a Hub licence id"):
        build_dataset_folder(run_output, tmp_path / "ds", license="MIT License")
    assert not (tmp_path / "ds").exists()


def _demo_run(tmp_path: Path) -> Path:
    """A run output with the real table schemas and the demo pipeline's resolved config."""
    from builder.config import dump_resolved, load_config

    out = make_real_run_output(tmp_path, trajectories=6)
    resolved = yaml.safe_load(dump_resolved(load_config(REPO / "pipelines" / "demo.yaml", [])))
    resolved["gate"]["mode"] = "likelihood"  # a gate mode other helpers add; shown when set
    (out / "config.resolved.yaml").write_text(yaml.safe_dump(resolved))
    report = {
        "totals": {f"figure_{i}": i for i in range(120)},  # more rows than any cut-off
        "compression": {"tokens_saved": 1794, "token_ratio": 0.004},
        "redactions": {"github_token": 3, "aws_access_key": 1},
        "control": {"pass_rate": 0.25, "warning": "judge passes shuffled pairs", "steps": 8,
                    "reproduced": 7},
    }  # fmt: skip
    (out / "report.json").write_text(json.dumps(report))
    return out


def test_the_demo_card_has_every_item_a_reader_needs(tmp_path: Path) -> None:
    from builder.publish.columns import COLUMNS

    out = _demo_run(tmp_path)
    dest = tmp_path / "demo-dataset"
    summary = build_dataset_folder(out, dest, license="mit")
    card = (dest / "README.md").read_text()
    data = _card_data(card)
    assert data.license == "mit" and data.configs[0]["config_name"] == "prompt_completion"
    body = card.split("\n---\n", 1)[1]

    for config, layout in summary.configs.items():  # every column of every config
        section = body.split(f"### `{config}`", 1)[1].split("\n\n", 2)[1]
        for column in layout.schema.names:
            assert f"| `{column}` |" in section and COLUMNS[config][column] in section, column
    # inputs by name and licence: no local folder on the card
    assert "| `samples/` | `mit` | publish.input_licenses |" in body
    for setting in (
        "**Teacher**: `teacher-m`",
        "**Agent**: `agent-m`",
        "**Gate mode**: `likelihood`",
        "**Similarity**: `semantic`",
        "**Threshold**: `0.75`",
        "**Aggregate**: `agree`",
        "**References that must agree**: `1`",
        "**References mode**: `logged`",
        "**Fallback when nothing passes**: `unchanged`",
        "**Eligibility: min tokens (cl100k, line-numbered)**: `470`",
        "**Eligibility: require focus question**: `False`",
        "**Eligibility: max observation chars**: `1000000`",
        "**Teacher temperature**: `1.0`",
    ):
        assert setting in body, setting
    # a short statistics table; every figure is in the linked files
    assert "| tokens saved on selected steps | 1794 |" in body
    assert "| totals.figure_7 |" not in body
    assert json.loads((dest / "report.json").read_text())["totals"]["figure_119"] == 119
    statistics = json.loads((dest / "statistics.json").read_text())
    assert statistics["configs"]["sft"]["rows"] == summary.configs["sft"].rows
    assert "| github_token | 3 | 0 |" in body and "| aws_access_key | 1 | 0 |" in body
    assert "## Judge reliability" in body and "| pass_rate | 0.25 |" in body
    assert "| reproduced | 7 |" in body and "judge passes shuffled pairs" in body
    assert "Small datasets therefore often have no validation or test split" in body
    per_split = summary.split_of_trajectory.values()
    for split in ("validation", "test"):
        if split not in per_split:
            assert f"| {split} | 0.05 | 0 | 0.3 | not created" in body
    target = "./demo-dataset"  # the folder by name, never its local path
    assert f'load_dataset("{target}", "sft")' in body and "ORG/NAME" not in body
    assert "SFTTrainer(" in body and "DPOTrainer(" in body
    assert f'load_dataset("{target}", "prompt_completion", split="train")' in body
    assert f'load_dataset("{target}", "preferences", split="train")' in body
    assert "[`report.json`](report.json)" in body and "best selected row" in body
    assert json.loads((dest / "report.json").read_text())["control"]["steps"] == 8
    # the prose sections
    made = body.split("## How this dataset was made", 1)[1].split("\n## ", 1)[0]
    assert "at least 470 cl100k tokens" in made and "likelihood" in made
    limits = body.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    assert "7 of 8 steps" in limits and "control pass rate 25%" in limits
    assert "judge is unreliable" in limits  # the control's warning is carried over
    assert "likelihood gate has not been measured against human labels" in limits
    assert "It looks one action ahead" in limits
    citation = body.split("## Citation", 1)[1]
    assert "@misc{" in citation and "arXiv:2607.02911" in citation
    for text in (card, *(p.read_text() for p in dest.glob("*.json"))):
        assert str(tmp_path) not in text and str(REPO) not in text


def test_the_usage_snippet_names_the_repo_when_publishing_to_the_hub(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, repo_id="acme/nap")
    body = (dest / "README.md").read_text()
    assert 'load_dataset("acme/nap", "prompt_completion", split="train")' in body
    assert str(dest) not in body
