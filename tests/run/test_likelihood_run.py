"""Likelihood mode end to end against vLLM- and SGLang-shaped stand-ins (real HTTP): on a
case built so that the two gates must agree, it selects exactly the generate mode's rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.run.logprob_server import LogprobServer
from tests.run.nap_server import replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli", "run"]
ROWS = ["trajectory_id", "step_index", "candidate_index", "rank", "target", "length_reward"]


def _run(
    corpus: Path, server: LogprobServer, out: Path, command: str = "run", **extra: Any
) -> dict[str, Any]:
    config = out.with_suffix(".yaml")
    config.write_text(run_config(corpus, server.base_url, out, **extra))
    if command == "plan":
        argv = [sys.executable, "-m", "builder.cli", "plan", str(config), "--json"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)
    done = subprocess.run([*CLI, str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("api", ["vllm", "sglang"])
def test_likelihood_selects_the_rows_generate_selects(tmp_path: Path, api: str) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with LogprobServer() as server:
        _run(corpus, server, tmp_path / "generate")
        likely: dict[str, Any] = {
            "gate": {"mode": "likelihood", "likelihood_api": api},
            "prices": {"fake-agent": {"input": 3.0, "output": 15.0}},
        }
        plan = _run(corpus, server, tmp_path / "likelihood", "plan", **likely)
        before = len(server.requests)
        report = _run(corpus, server, tmp_path / "likelihood", **likely)
        scoring = [
            b for b in server.requests[before:] if "prompt_logprobs" in b or "return_logprob" in b
        ]
    assert scoring, "likelihood mode must ask the server for prompt log-probabilities"
    frames = {
        mode: pl.read_parquet(tmp_path / mode / "supervision" / "*.parquet").sort(ROWS[:4])
        for mode in ("generate", "likelihood")
    }
    assert frames["generate"].height > 0
    assert (
        frames["likelihood"].select(ROWS).to_dicts() == frames["generate"].select(ROWS).to_dicts()
    )
    judged = pl.read_parquet(tmp_path / "likelihood" / "judgements" / "*.parquet")
    candidates = judged.filter(~pl.col("is_control"))
    assert set(candidates["gate_mode"]) == {"likelihood"}
    assert candidates["scores"].list.len().min() >= 1  # one score per reference
    assert candidates.filter(~pl.col("passed")).height > 0  # the plain summaries fail
    generated = pl.read_parquet(tmp_path / "generate" / "judgements" / "*.parquet")
    key = ["trajectory_id", "step_index", "candidate_index"]
    verdicts = {
        mode: frame.filter(~pl.col("is_control")).select(*key, "passed").sort(key).to_dicts()
        for mode, frame in (("generate", generated), ("likelihood", judged))
    }
    assert verdicts["likelihood"] == verdicts["generate"]
    assert report["gate"]["mode"] == "likelihood" and report["gate"]["likelihood_score"] == "mean"
    assert report["control"]["pass_rate"] == 1.0
    # scored requests are paid and booked like chat ones, and `plan` expects them
    booked = report["usage"]["stages"]["likelihood"]
    assert booked["requests"] > 0 and booked["prompt_tokens"] > 0
    expected = (3.0 * booked["prompt_tokens"] + 15.0 * booked["completion_tokens"]) / 1e6
    assert booked["cost_usd"] == pytest.approx(expected)
    total = sum(stage["cost_usd"] for stage in report["usage"]["stages"].values())
    assert report["budget"]["spent_usd"] == pytest.approx(total)
    assert "judgements" not in plan["stages"]
    planned = plan["stages"]["likelihood"]
    assert planned["requests"] == pytest.approx(booked["requests"], rel=0.15)
    calls = 2 + 2 if api == "vllm" else 1  # vLLM: /tokenize of the context and of 2 replies
    assert planned["http_requests"] == pytest.approx(calls * planned["requests"])
    if api == "vllm":  # token ids from the server's own chat template (/tokenize)
        assert all(isinstance(b["prompt"][0], list) for b in scoring)
        assert booked["requests"] == len(scoring)
        tokenized = [b for b in server.requests[before:] if "add_generation_prompt" in b]
        tokenized += [b for b in server.requests[before:] if "add_special_tokens" in b]
        assert booked["http_requests"] == len(scoring) + len(tokenized)  # what the server saw
        assert any("messages" in b for b in server.requests[before:])
    if api == "sglang":
        assert booked["http_requests"] == len(scoring)
        assert all(b["logprob_start_len"] >= 0 for b in scoring)
        assert any(b["logprob_start_len"] > 0 for b in scoring)  # only the tail is returned
