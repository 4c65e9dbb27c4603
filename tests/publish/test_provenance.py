"""A whole run over the real trajectory files (every format) against the scripted endpoints,
with and without `exclude_instances: swe-bench-verified`, then published: every row of every
config traces back to its raw file, the excluded instance never reaches a model, and the
console, report and card say how many trajectories were dropped."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from builder.cli import main
from builder.ingest.instances import named_set
from tests.ingest.raw_ids import raw_instance_ids
from tests.paths import SHARED
from tests.run.nap_server import nap_server, run_config

CONFIGS = ("prompt_completion", "sft", "preferences", "candidates")
DJANGO = SHARED / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"


def _run(tmp_path: Path, name: str, **extra: object) -> tuple[Path, list[str]]:
    out = tmp_path / name
    with nap_server() as server:
        config = tmp_path / f"{name}.yaml"
        config.write_text(run_config(SHARED, server.base_url, out, **extra))
        assert main(["run", str(config)]) == 0
        sent = [json.dumps(body) for body in server.requests]
    return out, sent


def _task_excerpt() -> str:
    """A piece of the Verified trajectory's task, read from its raw file: in every request of
    that trajectory when it is not excluded."""
    messages = json.loads(DJANGO.read_text())["messages"]
    task = messages[1]["content"].split("<pr_description>", 1)[1]
    return json.dumps(task.strip()[:60])[1:-1]  # as it appears inside a JSON request body


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    root = tmp_path_factory.mktemp("provenance")
    return {
        "plain": _run(root, "plain"),
        "clean": _run(root, "clean", exclude_instances="swe-bench-verified"),
    }


def test_the_excluded_instance_never_reaches_a_model_and_every_figure_says_so(
    runs: dict[str, tuple[Path, list[str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    excerpt = _task_excerpt()
    plain, plain_sent = runs["plain"]
    clean, clean_sent = runs["clean"]
    assert any(excerpt in body for body in plain_sent)  # the check can fail
    assert not any(excerpt in body for body in clean_sent)
    raw = raw_instance_ids()
    verified = named_set("swe-bench-verified")
    dropped = sum(1 for v in raw.values() if v in verified)
    report = json.loads((clean / "report.json").read_text())
    section = report["decontamination"]
    assert section["excluded_trajectories"] == dropped == 1
    assert section["exclude_instances"] == "set swe-bench-verified"
    assert section["kept_swe-bench-verified_instances"] == 0 and section["warning"] is None
    assert report["totals"]["trajectories"] == len(raw) - dropped
    plain_report = json.loads((plain / "report.json").read_text())
    assert plain_report["decontamination"]["kept_swe-bench-verified_instances"] == 1
    assert "django__django-16255" in plain_report["decontamination"]["warning"]
    assert "exclude_instances" in (plain / "report.md").read_text()

    dest = tmp_path / "dataset"
    assert main(["publish", str(clean), "--to", str(dest)]) == 0
    card = (dest / "README.md").read_text()
    assert "**exclude_instances**: set swe-bench-verified: 1 trajectories of 1 instances" in card
    assert "| trajectories excluded (decontamination) | 1 |" in card
    for config in CONFIGS:
        if (dest / "data" / config).is_dir():
            rows = pl.read_parquet(dest / "data" / config / "*.parquet")
            assert not set(rows["instance_id"].drop_nulls()) & verified


def test_every_row_of_every_config_traces_back_to_its_raw_file(
    runs: dict[str, tuple[Path, list[str]]], tmp_path: Path
) -> None:
    plain, _ = runs["plain"]
    dest = tmp_path / "dataset"
    assert main(["publish", str(plain), "--to", str(dest)]) == 0
    raw = raw_instance_ids()
    trajectories = pl.read_parquet(plain / "trajectories" / "*.parquet")
    model = dict(zip(trajectories["trajectory_id"], trajectories["agent_model"], strict=True))
    resolved = yaml.safe_load((plain / "config.resolved.yaml").read_text())
    for config in CONFIGS:
        rows = pl.read_parquet(dest / "data" / config / "*.parquet")
        assert rows.height > 0
        for row in rows.iter_rows(named=True):
            file = row["source_file"]
            assert file.startswith("trajectories/") and not file.startswith("/")
            key = (file.removeprefix("trajectories/"), row["record_index"])
            assert (SHARED / key[0]).is_file()
            assert row["instance_id"] == raw[key], (config, key)
            assert row["trajectory_model"] == model[row["trajectory_id"]]
            assert row["harness"] and row["source_format"]
            assert row["agent_model"] == resolved["agent"]["model"] == "fake-agent"
            assert row["gate_threshold"] == resolved["gate"]["threshold"]
            assert row["gate_mode"] == "generate"
        if config == "candidates":  # the gate's verdict, joined from the judgements
            judged = rows.filter(pl.col("passed").is_not_null())
            assert judged.height > 0 and judged["similarity"].null_count() == 0
            judgements = pl.read_parquet(plain / "judgements" / "*.parquet").filter(
                ~pl.col("is_control")
            )
            assert judged.height == judgements.height
            assert judged["passed"].sum() == judgements["passed"].sum()
    instances = set(pl.read_parquet(dest / "data" / "candidates" / "*.parquet")["instance_id"])
    assert {"django__django-16255", "pydicom__pydicom-1458", None} <= instances
    # the report's per-trajectory plot labels its bars by task instance
    sft = pl.read_parquet(dest / "data" / "sft" / "*.parquet")
    plot = (plain / "plots" / "tokens_saved_per_trajectory.svg").read_text()
    labelled = set(sft["instance_id"].drop_nulls())
    assert labelled and all(f"<title>{name}: " in plot for name in labelled)  # full names
