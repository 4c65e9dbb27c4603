"""A real run (scripted endpoints, the project's sample trajectories) published with the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from builder.cli import main
from builder.publish.columns import UNDOCUMENTED
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config


def test_a_run_publishes_a_card_the_hub_accepts_and_configs_that_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    out = tmp_path / "out"
    publish = {"license": "mit", "input_licenses": {"builder/samples": "mit"}}
    with nap_server() as server:
        config = tmp_path / "cfg.yaml"
        config.write_text(run_config(SAMPLES, server.base_url, out, publish=publish))
        assert main(["run", str(config)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["seconds"] > 0  # set before the report was written
    assert 0 < report["run"]["stage_seconds"]["report"] < report["run"]["seconds"]
    assert f"| seconds | {report['run']['seconds']:.4f} |" in (out / "report.md").read_text()

    dest = tmp_path / "dataset"
    assert main(["publish", str(out), "--to", str(dest)]) == 0
    card_text = (dest / "README.md").read_text()
    card = DatasetCard(card_text)
    assert card.data.license == "mit"
    assert UNDOCUMENTED not in card_text
    published = json.loads((dest / "report.json").read_text())
    assert published["run"].pop("out_dir", None) is None  # no local folder is published
    assert published == {
        **report,
        "run": {k: v for k, v in report["run"].items() if k != "out_dir"},
    }
    assert "| `samples/` | `mit` | publish.input_licenses |" in card_text
    assert str(tmp_path) not in card_text and str(SAMPLES.parent) not in card_text
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    assert f"**Threshold**: `{resolved['gate']['threshold']}`" in card_text
    assert "**Agent**: `fake-agent`" in card_text and "**References mode**: `sampled`" in card_text
    assert 'load_dataset("./dataset", "sft")' in card_text

    cache = str(tmp_path / "cache")
    splits = load_dataset(str(dest), "sft", cache_dir=cache)
    rows = sum(d.num_rows for d in splits.values())
    assert rows == report["totals"]["selected_rows"] + report["totals"]["fallback_rows"] > 0
    sft = splits["train"]
    assert {"prompt", "completion"}.isdisjoint(sft.column_names)
    for row in sft:
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert row["messages"][0]["content"] == row["system_prompt"]
        assert row["messages"][2]["content"] == row["target"]
    if (dest / "data" / "preferences").is_dir():
        pairs = load_dataset(str(dest), "preferences", cache_dir=cache)
        for row in (r for d in pairs.values() for r in d):
            assert row["prompt"][0] == {"role": "system", "content": row["system_prompt"]}
            assert row["chosen"] == [{"role": "assistant", "content": row["chosen_target"]}]
