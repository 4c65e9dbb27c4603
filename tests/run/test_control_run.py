"""Whole runs against the scripted endpoint: the control's pass rate in the report, the
progress line and the console, and the warning where the agent does not reproduce itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl

from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import nap_server, nap_text, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli", "run"]


def _run(
    corpus: Path, server: FakeAPIServer, out: Path, **extra: Any
) -> subprocess.CompletedProcess:
    config = out.with_suffix(".yaml")
    config.write_text(run_config(corpus, server.base_url, out, **extra))
    done = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_an_agent_that_reproduces_its_reference_passes_every_control(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    out = tmp_path / "out"
    with nap_server() as server:
        done = _run(corpus, server, out)
    report = json.loads((out / "report.json").read_text())
    judgements = pl.read_parquet(out / "judgements" / "*.parquet")
    controls = judgements.filter(pl.col("is_control"))
    eligible = report["totals"]["eligible_steps"]
    assert eligible > 0 and controls.height == eligible  # one control per judged step
    assert report["control"] == {
        "mode": "judged",
        "steps": eligible,
        "reproduced": eligible,
        "pass_rate": 1.0,
        "floor": 0.5,
        "warning": None,
    }
    # control rows count in no candidate figure, and are never selected
    assert report["totals"]["judged_candidates"] == judgements.height - eligible
    supervision = pl.read_parquet(out / "supervision" / "*.parquet")
    assert (supervision["candidate_index"] >= 0).all()
    assert f"control: agent reproduced its reference on {eligible}/{eligible}" in done.stdout
    assert "WARNING" not in done.stdout
    assert "control pass rate 100%" in (out / "report.md").read_text()
    assert "control 100%" in (out / "run.log").read_text()  # the progress line's figures
    assert report["gate"]["mode"] == "generate"


def forgetful_text(body: dict[str, Any], index: int, number: int) -> str | dict[str, Any]:
    """The scripted teacher, and an agent that never repeats itself."""
    if body.get("response_format"):
        return nap_text(body, index, number)
    return f"THOUGHT: no idea.\n\n```bash\ncat notes_{number}_{index}.txt\n```"


def test_an_agent_that_does_not_reproduce_itself_gets_a_loud_warning(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    out = tmp_path / "out"
    with FakeAPIServer(api="openai", text=forgetful_text) as server:
        done = _run(corpus, server, out, gate={"control_floor": 0.8})
    report = json.loads((out / "report.json").read_text())
    control = report["control"]
    assert control["steps"] > 0 and control["reproduced"] == 0 and control["pass_rate"] == 0.0
    assert control["floor"] == 0.8
    assert "JUDGE UNRELIABLE" in control["warning"] and "chat template" in control["warning"]
    assert f"WARNING: {control['warning']}" in done.stdout
    assert "JUDGE UNRELIABLE" in done.stderr or "JUDGE UNRELIABLE" in (out / "run.log").read_text()
    assert "> **WARNING:** JUDGE UNRELIABLE" in (out / "report.md").read_text()


def test_reused_reference_samples_cost_no_control_request(tmp_path: Path) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    counts = {}
    for control in ("auto", "judged"):
        out = tmp_path / control
        extra = {"references": {"mode": "sampled", "samples": 2, "temperature": 0.0}}
        with nap_server() as server:
            _run(corpus, server, out, gate={"control": control}, **extra)
            counts[control] = server.count
        report = json.loads((out / "report.json").read_text())
        assert report["control"]["pass_rate"] == 1.0
        mode = "reused_reference_sample" if control == "auto" else "judged"
        assert report["control"]["mode"] == mode
        control_requests = report["early_exit"]["agent requests for the control"]
        assert control_requests == (0 if control == "auto" else report["control"]["steps"])
    assert counts["judged"] >= counts["auto"]  # at most the cache spares the judged control
