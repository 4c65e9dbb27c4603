"""Whole runs through the batch APIs: same tables as online, rounds, kill -9 and resume, cost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from builder.config import load_config
from builder.run.driver import run_pipeline
from tests.llm.batch_servers import BatchAPIServer
from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import KEYS, nap_server, nap_text, replicate_samples, run_config

TABLES = {
    t: KEYS[t] for t in ("candidates", "references", "judgements", "supervision", "preferences")
}
PRICES = {
    "fake-teacher": {"input": 2.0, "output": 8.0},
    "fake-agent": {"input": 1.0, "output": 4.0},
}
CLI = [sys.executable, "-m", "builder.cli", "run"]


def _tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    frames = {t: pl.read_parquet(out / t / "*.parquet") for t in TABLES}
    return {t: f.drop([c for c in f.columns if "latency" in c]).sort(TABLES[t]).to_dicts()
            for t, f in frames.items()}  # fmt: skip


def _config(tmp: Path, corpus: Path, url: str, name: str, batch: bool) -> Path:
    extra: dict[str, Any] = {"prices": PRICES}
    if batch:
        extra["teacher"] = {"batch": True}
        extra["agent"] = {"batch": True}
        extra["limits"] = {"batch_poll_s": 0.02, "batch_poll_max_s": 0.1}
    path = tmp / f"{name}.yaml"
    path.write_text(run_config(corpus, url, tmp / name, **extra))
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return replicate_samples(tmp_path / "corpus", 2)


def test_a_batch_run_writes_the_online_runs_tables_at_half_the_cost(
    tmp_path: Path, corpus: Path
) -> None:
    with nap_server() as online, BatchAPIServer(FakeAPIServer(text=nap_text)) as batch:
        online_cfg = _config(tmp_path, corpus, online.base_url, "online", batch=False)
        batch_cfg = _config(tmp_path, corpus, batch.openai_url, "batch", batch=True)
        online_run = run_pipeline(load_config(online_cfg), config_path=online_cfg)
        batch_run = run_pipeline(load_config(batch_cfg), config_path=batch_cfg)
    assert online_run.exit_code == batch_run.exit_code == 0
    assert _tables(tmp_path / "online") == _tables(tmp_path / "batch")
    assert batch_run.batch_rounds >= 2  # teacher + references, then the judgement waves
    assert set(batch.submitted.values()) == {1}  # every request submitted exactly once
    online_cost = online_run.report["usage"]["total"]["cost_usd"]
    batch_cost = batch_run.report["usage"]["total"]["cost_usd"]
    assert online_cost > 0 and batch_cost == pytest.approx(online_cost / 2, rel=1e-6)


def test_kill_9_between_submit_and_collect_then_resume_submits_nothing_twice(
    tmp_path: Path, corpus: Path
) -> None:
    with (
        nap_server() as online,
        BatchAPIServer(FakeAPIServer(text=nap_text), polls_to_finish=10**9) as batch,
    ):
        online_cfg = _config(tmp_path, corpus, online.base_url, "online", batch=False)
        assert run_pipeline(load_config(online_cfg), config_path=online_cfg).exit_code == 0
        batch_cfg = _config(tmp_path, corpus, batch.openai_url, "batch", batch=True)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        proc = subprocess.Popen([*CLI, str(batch_cfg)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 120
        while batch.creates == 0 or not any(j.polls for j in batch.jobs.values()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the jobs are submitted and being polled
        proc.wait()
        submitted_before = batch.creates
        status = subprocess.run([*CLI[:-1], "status", str(tmp_path / "batch")], env=env,
                                capture_output=True, text=True, check=True).stdout  # fmt: skip
        assert "pending" in status and "batch_1" in status and "submitted" in status
        batch.polls_to_finish = 1  # the provider finishes while we are away
        resumed = subprocess.run([*CLI, str(batch_cfg)], env=env, capture_output=True,
                                 text=True, timeout=300)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert submitted_before >= 1 and set(batch.submitted.values()) == {1}
    assert _tables(tmp_path / "online") == _tables(tmp_path / "batch")
    jobs = json.loads((tmp_path / "batch" / "report.json").read_text())["usage"]
    assert jobs["total"]["cost_usd"] > 0


def test_a_batch_run_stops_at_its_budget_reserved_at_batch_prices_and_a_raise_resumes(
    tmp_path: Path, corpus: Path
) -> None:
    with BatchAPIServer(FakeAPIServer(text=nap_text)) as batch:
        small = ["teacher.max_tokens=16", "agent.max_tokens=16"]  # worst case near the real cost
        path = _config(tmp_path, corpus, batch.openai_url, "batch", batch=True)
        full = run_pipeline(load_config(path, small), config_path=path)
        full_cost = full.report["usage"]["total"]["cost_usd"]
        budget = full_cost / 2
        capped = tmp_path / "capped.yaml"
        capped.write_text(
            run_config(corpus, batch.openai_url, tmp_path / "capped", prices=PRICES,
                       teacher={"batch": True}, agent={"batch": True},
                       limits={"batch_poll_s": 0.02, "budget_usd": budget})
        )  # fmt: skip
        stopped = run_pipeline(load_config(capped, small), config_path=capped)
        ledger = json.loads((tmp_path / "capped" / "_state" / "budget.json").read_text())
        assert stopped.stopped == "budget" and stopped.exit_code == 3
        assert 0 < ledger["spent_usd"] <= budget + ledger["largest_reservation_usd"]
        raised = run_pipeline(
            load_config(capped, [*small, f"limits.budget_usd={full_cost * 2}"]), config_path=capped
        )
    assert raised.exit_code == 0
    assert _tables(tmp_path / "capped") == _tables(tmp_path / "batch")


def test_a_refused_batch_line_is_sent_once_and_its_reason_shown(
    tmp_path: Path, corpus: Path
) -> None:
    """Lines the model refuses (here: over a 700-token window, the real OpenAI body) are not
    resubmitted round after round: sent once, their reason kept per line, shown by `status`
    and in the report, and their steps dropped with it; the run ends."""
    from builder.llm.batch.status import format_status

    answers = FakeAPIServer(text=nap_text, context_window=700)
    with BatchAPIServer(answers) as batch:
        cfg = _config(tmp_path, corpus, batch.openai_url, "batch", batch=True)
        run = run_pipeline(load_config(cfg), config_path=cfg)
        assert answers.refused  # the window really refused some lines
        assert set(batch.submitted.values()) == {1}  # each line submitted exactly once
    assert run.exit_code == 0
    status = format_status(tmp_path / "batch")
    assert "refused (never sent again)" in status and "maximum context length" in status
    dropped = run.report["dropped_steps"]["by reason (run)"]
    assert dropped.get("context_too_long", 0) > 0
    assert run.report["batch"]["refused"]
