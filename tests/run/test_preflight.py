"""Pre-flight: a bad input path, a missing key, an unreachable endpoint, an unwritable output
or a spent budget stop `run` with exit 2 before anything is ingested or sent."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.servers import FakeAPIServer
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "builder.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=ROOT,
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the block ends


def _config(tmp_path: Path, base_url: str, **extra: object) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(run_config(SAMPLES, base_url, tmp_path / "out", **extra))
    return path


def _nothing_ingested(tmp_path: Path) -> bool:
    return not list((tmp_path / "out").glob("trajectories/*.parquet"))


def test_a_mistyped_input_path_stops_run_plan_and_ingest_with_exit_2(tmp_path: Path) -> None:
    with nap_server() as server:
        config = _config(tmp_path, server.base_url, inputs=[{"path": str(tmp_path / "nope")}])
        for command in ("run", "plan"):
            done = _cli(command, str(config))
            assert done.returncode == 2, done.stderr
            assert f"inputs[0].path: {tmp_path / 'nope'} does not exist" in done.stderr
        assert server.count == 0
    assert _nothing_ingested(tmp_path)
    done = _cli("ingest", str(tmp_path / "nope"), "--out", str(tmp_path / "work"))
    assert done.returncode == 2 and "does not exist" in done.stderr
    glob = _cli("ingest", str(tmp_path / "*.traj.json"), "--out", str(tmp_path / "work"))
    assert glob.returncode == 2 and "matches no file" in glob.stderr


def test_a_missing_api_key_is_named_before_the_ingest(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        "http://127.0.0.1:9/v1",
        teacher={"base_url": None, "api_key_env": "NAP_TEST_UNSET_KEY"},
    )
    env = {k: v for k, v in os.environ.items() if k != "NAP_TEST_UNSET_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "builder.cli", "run", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert "teacher.api_key_env: the environment variable NAP_TEST_UNSET_KEY is not set" in (
        done.stderr
    )
    assert _nothing_ingested(tmp_path)


def test_an_unreachable_endpoint_is_named_with_the_key_to_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    done = _cli("run", str(_config(tmp_path, url)))
    assert done.returncode == 2, done.stderr
    assert f"teacher.base_url: cannot reach {url}/models" in done.stderr
    assert "start it first" in done.stderr
    assert done.stderr.count("cannot reach") == 1  # one URL, asked once for both roles
    assert _nothing_ingested(tmp_path)


def test_a_refused_key_is_named(tmp_path: Path) -> None:
    with FakeAPIServer(api="openai") as server:
        server.refuse_key = True
        done = _cli("run", str(_config(tmp_path, server.base_url)))
        assert done.returncode == 2, done.stderr
        assert "refused the API key in OPENAI_API_KEY (HTTP 401)" in done.stderr
        assert server.count == 0 and server.model_lists == 1
    assert _nothing_ingested(tmp_path)


def test_an_unwritable_output_and_a_spent_budget_are_named(tmp_path: Path) -> None:
    with nap_server() as server:
        blocker = tmp_path / "file"
        blocker.write_text("")
        config = _config(tmp_path, server.base_url, output={"dir": str(blocker / "out")})
        done = _cli("run", str(config))
        assert done.returncode == 2 and "output.dir: cannot write to" in done.stderr
        ledger = tmp_path / "out" / "_state" / "budget.json"
        ledger.parent.mkdir(parents=True)
        ledger.write_text(json.dumps({"spent_usd": 2.5}))
        prices = {
            "fake-teacher": {"input": 1, "output": 1},
            "fake-agent": {"input": 1, "output": 1},
        }
        config = _config(tmp_path, server.base_url, limits={"budget_usd": 2.0}, prices=prices)
        done = _cli("run", str(config))
        assert done.returncode == 2
        assert "limits.budget_usd: $2.5000 of $2.0000 is spent" in done.stderr
        assert server.count == 0


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_good_config_passes_with_one_models_request_per_endpoint(
    tmp_path: Path, api: str
) -> None:
    from builder.config import load_config
    from builder.run.preflight import require_ready

    with FakeAPIServer(api=api) as server:
        provider = {"provider": api, "base_url": server.base_url, "api_key_env": "NAP_TEST_KEY"}
        config = _config(tmp_path, server.base_url, teacher=provider, agent=provider)
        os.environ["NAP_TEST_KEY"] = "sk-test"
        try:
            require_ready(load_config(config))
        finally:
            del os.environ["NAP_TEST_KEY"]
        assert server.model_lists == 1 and server.count == 0
