"""A scripted run over the Codex CLI, Gemini CLI and Cline / Roo Code samples produces
supervision rows for each, and the run folder exports to ADP with those rows linked to the
observations they compress."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl

from tests.ingest.formats.common import DATA
from tests.run.nap_server import nap_server, run_config

CLI = [sys.executable, "-m", "builder.cli"]


def test_a_run_over_the_new_formats_yields_supervision_and_exports_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with nap_server() as server:
        config = tmp_path / "run.yaml"
        config.write_text(run_config(DATA, server.base_url, out, eligibility={"min_tokens": 200}))
        done = subprocess.run(
            [*CLI, "run", str(config)], capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.refused == []
        agent = [b for b in server.requests if not b.get("response_format")]
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    supervision = pl.read_parquet(out / "supervision" / "*.parquet")
    judged = pl.read_parquet(out / "judgements" / "*.parquet")
    harness = dict(zip(trajectories["trajectory_id"], trajectories["harness"], strict=True))
    with_rows = {harness[t] for t in supervision.filter(~pl.col("is_fallback"))["trajectory_id"]}
    assert with_rows == {"codex-cli", "gemini-cli", "cline", "roo-code"}
    assert not judged.filter(~pl.col("is_control"))["format_error"].any()
    # tool-call sessions are replayed with their harness's tools; Cline's XML one with none
    offered = {tuple(sorted(t["function"]["name"] for t in b.get("tools") or [])) for b in agent}
    assert any("run_shell_command" in names for names in offered)
    assert any("apply_patch" in names and "shell" in names for names in offered)
    assert () in offered

    adp = tmp_path / "adp"
    done = subprocess.run(
        [*CLI, "export", str(out), "--to", "adp", str(adp)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (adp / "full_std.jsonl").read_text().splitlines()]
    linked = [
        (t["id"], link["step_index"], row["target"])
        for t in lines
        for link in t["details"]["nap_builder"]["steps"]
        for row in link.get("supervision", [])
    ]
    expected = supervision.select("trajectory_id", "step_index", "target").rows()
    assert sorted(linked) == sorted(expected)
    for trajectory in lines:
        for link in trajectory["details"]["nap_builder"]["steps"]:
            if link.get("supervision"):
                assert trajectory["content"][link["content_index"]]["class_"] == "text_observation"
