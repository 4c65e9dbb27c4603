"""`nap-builder inspect`: a trajectory's steps, headed by where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from builder.ingest.parallel import InputSpec, run_ingest
from builder.inspect import render_trajectory
from tests.paths import SHARED


def test_the_header_names_the_task_instance_the_raw_file_records(tmp_path: Path) -> None:
    run_ingest([InputSpec(str(SHARED / "mini-swe-agent")), InputSpec(str(SHARED / "claude-code"))],
               tmp_path, workers=1)  # fmt: skip
    rows = pl.read_parquet(tmp_path / "trajectories" / "*.parquet")
    django = SHARED / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"
    instance = json.loads(django.read_text())["instance_id"]
    tid = rows.filter(pl.col("source_path") == str(django))["trajectory_id"][0]
    text = render_trajectory(tmp_path, tid[:10])
    assert f"instance {instance}  harness mini-swe-agent  format mini-swe-agent" in text
    assert "source django__django-16255.traj.json record 0" in text
    session = rows.filter(pl.col("source_format") == "claude-code")["trajectory_id"][0]
    assert "instance not recorded  harness claude-code" in render_trajectory(tmp_path, session)
