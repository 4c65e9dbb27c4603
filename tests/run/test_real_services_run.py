"""Whole runs against stand-ins that refuse what the real services refuse (tests/llm/refusals.py):
tool-calling logs judged by Anthropic- and OpenAI-shaped agents, context overflow on every
provider, reasoning models with the defaults, and a 429 storm with Retry-After: 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.llm.refusals import prompt_tokens
from tests.llm.servers import FakeAPIServer
from tests.paths import SHARED
from tests.run.nap_server import (
    anthropic_nap_content,
    nap_server,
    nap_text,
    replicate_samples,
    run_config,
)

CLI = [sys.executable, "-m", "builder.cli", "run"]
CLAUDE = SHARED / "claude-code/hello-world-script"
ENV = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-standin"}


def _run(out: Path, config: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    path = out.with_suffix(".yaml")
    path.write_text(config)
    done = subprocess.run([*CLI, str(path)], capture_output=True, text=True, timeout=600, env=ENV)
    assert done.returncode == expect, done.stdout + done.stderr
    return done


def _table(out: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(out / name / "*.parquet")


def _anthropic_agent(server: FakeAPIServer, model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {"provider": "anthropic", "model": model, "base_url": server.base_url}


def test_a_claude_code_log_judged_by_an_anthropic_agent_yields_supervision(tmp_path: Path) -> None:
    with (
        nap_server() as teacher,
        FakeAPIServer(api="anthropic", anthropic_content=anthropic_nap_content) as agent,
    ):
        out = tmp_path / "out"
        _run(out, run_config(CLAUDE, teacher.base_url, out, agent=_anthropic_agent(agent),
                             eligibility={"min_tokens": 0}))  # fmt: skip
        assert agent.refused == [] and agent.count > 0
        sent = agent.requests[0]
        assert {"Bash", "Write"} <= {t["name"] for t in sent["tools"]}
    assert _table(out, "supervision").height > 0
    steps = _table(out, "steps")
    assert set(steps["tool_schemas"].to_list()) == {"harness"}


def test_a_claude_code_log_judged_by_an_openai_agent_yields_supervision(tmp_path: Path) -> None:
    with nap_server() as server:
        out = tmp_path / "out"
        _run(out, run_config(CLAUDE, server.base_url, out, eligibility={"min_tokens": 0}))
        assert server.refused == []
        agent_bodies = [b for b in server.requests if not b.get("response_format")]
        assert agent_bodies and all(b.get("tools") for b in agent_bodies)
    judged = _table(out, "judgements")
    assert judged.height > 0 and not judged["format_error"].any()
    assert _table(out, "supervision").height > 0


def _agent_prompt_sizes(tmp_path: Path, corpus: Path) -> list[int]:
    """The largest agent prompt of each step, from a run against a roomy server."""
    with nap_server() as server:
        out = tmp_path / "sizes"
        _run(out, run_config(corpus, server.base_url, out))
        by_step: dict[str, int] = {}
        for body in server.requests:
            if not body.get("response_format"):
                key = json.dumps(body["messages"][:2])
                by_step[key] = max(by_step.get(key, 0), prompt_tokens(body))
    return sorted(by_step.values())


FLAVOURS = ["openai", "vllm", "vllm-engine", "sglang", "llama-server", "llama-cpp-python"]


def test_a_step_over_the_context_window_is_dropped_with_its_reason_on_every_provider(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    sizes = _agent_prompt_sizes(tmp_path, corpus)
    assert sizes[0] < sizes[-1]
    window = (sizes[0] + sizes[-1]) // 2 + 600  # the largest steps overflow, the smallest fit
    for flavour in [*FLAVOURS, "anthropic"]:
        out = tmp_path / flavour
        api = "anthropic" if flavour == "anthropic" else "openai"
        agent_server = FakeAPIServer(
            api=api, flavour=flavour, context_window=window, text=nap_text,
            anthropic_content=anthropic_nap_content, honour_n=flavour != "llama-cpp-python",
        )  # fmt: skip
        with nap_server() as teacher, agent_server as agent:
            endpoint = (
                _anthropic_agent(agent)
                if api == "anthropic"
                else {"provider": "openai", "model": "m", "base_url": agent.base_url}
            )
            _run(out, run_config(corpus, teacher.base_url, out, agent=endpoint))
            assert agent.refused, flavour  # the service really refused something
        report = json.loads((out / "report.json").read_text())
        dropped = report["dropped_steps"]["by reason (run)"]
        assert dropped.get("context_too_long", 0) > 0, (flavour, dropped)
        assert _table(out, "supervision").height > 0, flavour  # the steps that fit went on


def test_the_context_window_preflight_sends_nothing_for_a_step_that_cannot_fit(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with nap_server() as teacher, nap_server() as agent:
        out = tmp_path / "out"
        endpoint = {"provider": "openai", "model": "m", "base_url": agent.base_url,
                    "context_window": 600, "max_tokens": 100}  # fmt: skip
        _run(out, run_config(corpus, teacher.base_url, out, agent=endpoint))
        assert agent.count == 0 and teacher.count == 0
    report = json.loads((out / "report.json").read_text())
    steps = report["totals"]["eligible_steps"]
    assert report["dropped_steps"]["by reason (run)"] == {"context_window": steps}


@pytest.mark.parametrize("model", ["gpt-5-mini", "o3"])
def test_reasoning_models_run_to_completion_with_the_defaults(tmp_path: Path, model: str) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with nap_server() as server:
        out = tmp_path / "out"
        roles = {"provider": "openai", "model": model, "base_url": server.base_url}
        _run(out, run_config(corpus, server.base_url, out, teacher={**roles, "samples": 4},
                             agent=roles))  # fmt: skip
        assert server.refused == []
        assert all("temperature" not in b and "max_tokens" not in b for b in server.requests)
        assert all(b["max_completion_tokens"] > 4096 for b in server.requests)  # + thinking
    assert _table(out, "supervision").height > 0
    report = json.loads((out / "report.json").read_text())
    assert report["sampling"]["agent"]["effective"] == 1.0


def test_a_post_opus_4_6_agent_and_teacher_run_to_completion_with_the_defaults(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    with FakeAPIServer(api="anthropic", anthropic_content=anthropic_nap_content) as server:
        out = tmp_path / "out"
        role = _anthropic_agent(server, "claude-opus-4-7")
        _run(out, run_config(corpus, server.base_url, out, teacher={**role, "samples": 4},
                             agent=role))  # fmt: skip
        assert server.refused == [] and server.count > 0
        assert all("temperature" not in b for b in server.requests)
    assert _table(out, "supervision").height > 0


def test_a_429_storm_with_retry_after_0_gives_the_rows_of_a_fault_free_run(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 2)
    keys = {"candidates": ["trajectory_id", "step_index", "candidate_index"],
            "supervision": ["trajectory_id", "step_index", "rank"]}  # fmt: skip

    def rows(out: Path) -> dict[str, list[dict[str, Any]]]:
        return {t: _table(out, t).sort(k).to_dicts() for t, k in keys.items()}

    with nap_server() as clean:
        _run(tmp_path / "clean", run_config(corpus, clean.base_url, tmp_path / "clean"))
    with FakeAPIServer(api="openai", text=nap_text, throttle=0.3) as storm:
        _run(tmp_path / "storm", run_config(corpus, storm.base_url, tmp_path / "storm"))
        assert storm.throttled > 0.2 * (storm.count - storm.throttled)
    assert rows(tmp_path / "storm") == rows(tmp_path / "clean")
