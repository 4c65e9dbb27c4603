"""`nap-builder plan` sends nothing, and its request and prompt-token estimates come within
15% of what a real run sends to the scripted endpoint on the project samples."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from builder.steps.tokens import count_tokens
from tests.run.nap_server import nap_server, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli"]


def sent_tokens(body: dict[str, Any]) -> int:
    """cl100k tokens of what a received request carries: message texts, tool-call
    arguments, tool schemas (the quantities `plan` counts)."""
    total = 0
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text") or "") for p in content)
        total += count_tokens(str(content or ""))
        for call in message.get("tool_calls") or []:
            total += count_tokens(call["function"]["arguments"] or "")
    if body.get("tools"):
        total += count_tokens(json.dumps(body["tools"], ensure_ascii=False))
    return total


@pytest.fixture(scope="module")
def planned_and_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, list[dict]]:
    tmp = tmp_path_factory.mktemp("plan")
    corpus = replicate_samples(tmp / "corpus", 2)
    out = tmp / "out"
    config = tmp / "plan.yaml"
    prices = {
        "fake-teacher": {"input": 2.5, "output": 10.0},
        "fake-agent": {"input": 1.0, "output": 4.0},
    }
    with nap_server() as server:
        config.write_text(run_config(corpus, server.base_url, out, prices=prices))
        shown = subprocess.run(
            [*CLI, "plan", str(config)], capture_output=True, text=True, timeout=300
        )
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert "eligible steps" in shown.stdout and "no model request was sent" in shown.stdout
        planned = subprocess.run(
            [*CLI, "plan", str(config), "--json"], capture_output=True, text=True, timeout=300
        )
        assert planned.returncode == 0, planned.stderr
        assert server.count == 0  # plan sends nothing
        assert not (out / "trajectories").exists()  # and leaves OUT alone
        run = subprocess.run(
            [*CLI, "run", str(config)], capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stdout + run.stderr
        bodies = list(server.requests)
    report = json.loads((out / "report.json").read_text())
    return json.loads(planned.stdout), report, bodies


def test_plan_counts_the_eligible_steps_the_run_processes(planned_and_run: tuple) -> None:
    plan, report, _ = planned_and_run
    assert plan["eligible_steps"] == report["totals"]["eligible_steps"] > 0


def test_plan_requests_are_within_15_percent_of_the_run(planned_and_run: tuple) -> None:
    plan, _, bodies = planned_and_run
    assert plan["total"]["http_requests"] == pytest.approx(len(bodies), rel=0.15)
    teacher = [b for b in bodies if b.get("response_format")]
    assert plan["stages"]["teacher"]["http_requests"] == len(teacher)  # exact: one per step


def test_plan_prompt_tokens_are_within_15_percent_of_the_run(planned_and_run: tuple) -> None:
    plan, _, bodies = planned_and_run
    teacher = [b for b in bodies if b.get("response_format")]
    assert plan["stages"]["teacher"]["prompt_tokens"] == sum(sent_tokens(b) for b in teacher)
    total = sum(sent_tokens(b) for b in bodies)
    assert plan["total"]["prompt_tokens"] == pytest.approx(total, rel=0.15)
