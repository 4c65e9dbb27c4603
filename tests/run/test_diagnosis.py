"""Every request to an endpoint failing the same way: one line with the likely fix, in the
console summary and at the top of report.md, and exit 3."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl

from tests.llm.servers import FakeAPIServer, status
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, nap_text, run_config

ROOT = Path(__file__).resolve().parents[2]


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "builder.cli", "run", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )


def test_an_endpoint_that_answers_every_request_with_503_is_diagnosed_and_resumed(
    tmp_path: Path,
) -> None:
    """Its steps fail their requests, not the run: the shards are written but marked
    incomplete, the run exits 3 saying why, and the same command finishes them."""
    broken = FakeAPIServer(api="openai", faults=[status(503)] * 1000, text=nap_text)
    with nap_server() as agent, broken as teacher:
        config = tmp_path / "run.yaml"
        config.write_text(
            run_config(
                SAMPLES,
                agent.base_url,
                tmp_path / "out",
                teacher={"base_url": teacher.base_url},
                limits={"max_retries": 1},
            )
        )
        done = _run(config)
        report = (tmp_path / "out" / "report.md").read_text()
        teacher.faults.clear()  # the server is mended: the same command resumes
        resumed = _run(config)
    assert resumed.returncode == 0, resumed.stderr
    steps = pl.read_parquet(tmp_path / "out" / "steps" / "*.parquet").filter(pl.col("eligible"))
    candidates = pl.read_parquet(tmp_path / "out" / "candidates" / "*.parquet")
    per_step = candidates.group_by("trajectory_id", "step_index").len()
    assert per_step.height == steps.height  # every step has its candidates now, once
    keys = ["trajectory_id", "step_index", "candidate_index"]
    assert candidates.unique(keys).height == candidates.height
    assert done.returncode == 3, done.stderr
    pattern = (
        rf"every request to the teacher endpoint \({re.escape(teacher.base_url)}\) failed "
        r"\(server_error x\d+\): the server answered 5xx: look at its logs"
    )
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("ERROR: ")]
    assert re.fullmatch(f"ERROR: {pattern}", line), done.stdout
    headline = report.splitlines()[4]
    assert re.fullmatch(rf"> \*\*FAILED: 2 of 2 shards failed \({pattern}\); .*\*\*", headline)
    assert "the agent endpoint" not in done.stdout  # it answered: no line for it
