"""Kill a real `nap-builder run` at several points; the resumed run must equal an uninterrupted one.

The teacher and agent are a scripted OpenAI-compatible server on 127.0.0.1 (real HTTP); the run
is the real CLI in a subprocess.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from builder.run.shards import NAP_TABLES
from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import KEYS, nap_server, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli"]


@pytest.fixture(scope="module")
def server() -> FakeAPIServer:
    with nap_server(latency_s=0.05) as srv:
        yield srv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return replicate_samples(tmp_path_factory.mktemp("corpus"), 6)  # 12 shards


def _config(tmp: Path, corpus: Path, server: FakeAPIServer, name: str, **extra: object) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(run_config(corpus, server.base_url, tmp / name, **extra))
    return path


def _start(config: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [*CLI, "run", str(config)],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _finish(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "run", str(config)], text=True, capture_output=True, timeout=300)


def _markers(out: Path) -> int:
    return len(list((out / "_state" / "shards").glob("*.json")))


def _wait(condition: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, (
            f"run ended before the kill point: {proc.stdout.read() if proc.stdout else ''}"
        )
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.02)


def _tables(out: Path) -> dict[str, list[dict]]:
    tables = {}
    for table in (*NAP_TABLES, "trajectories", "steps"):
        frame = pl.read_parquet(out / table / "*.parquet").sort(KEYS[table])
        tables[table] = frame.to_dicts()
    return tables


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, server: FakeAPIServer
) -> dict:
    tmp = tmp_path_factory.mktemp("reference")
    done = _finish(_config(tmp, corpus, server, "ref"))
    assert done.returncode == 0, done.stdout + done.stderr
    tables = _tables(tmp / "ref")
    assert tables["supervision"] and tables["judgements"] and tables["candidates"]
    return tables


def test_kill_9_at_several_points_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, reference: dict
) -> None:
    config = _config(tmp_path, corpus, server, "killed")
    out = tmp_path / "killed"
    before = server.count
    # 1: in the middle of the first shards, before any is complete
    proc = _start(config)
    _wait(lambda: server.count >= before + 5, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _markers(out) == 0
    # 2: after two shards are complete
    proc = _start(config)
    _wait(lambda: _markers(out) >= 2, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = _markers(out)
    assert 2 <= kept < 12
    assert not list(out.rglob("*.tmp-*.parquet"))  # a torn temp file is never a table part
    # 3: resume to the end
    done = _finish(config)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"({kept} resumed" in done.stdout
    assert _tables(out) == reference


def test_sigterm_and_sigint_stop_gracefully_and_keep_completed_shards(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, reference: dict
) -> None:
    # 2 requests in flight keep few shards in flight, so a stop leaves work for the next run
    config = _config(tmp_path, corpus, server, "graceful", limits={"concurrency": 2})
    out = tmp_path / "graceful"
    for signum in (signal.SIGTERM, signal.SIGINT):
        proc = _start(config)
        start = _markers(out)
        _wait(lambda start=start: _markers(out) >= start + 1, proc)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130, output
        assert "finishing the shards in flight" in output
        assert "stopped early: interrupted" in output
        assert _markers(out) >= start + 1
        for table in NAP_TABLES:  # every table file belongs to a completed shard
            shards = {p.stem for p in (out / table).glob("*.parquet")}
            marked = {p.stem for p in (out / "_state" / "shards").glob("*.json")}
            assert shards <= marked | shards and marked <= shards
    done = _finish(config)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _tables(out) == reference


def test_a_finished_run_sends_no_request_when_run_again(
    tmp_path: Path, corpus: Path, server: FakeAPIServer, reference: dict
) -> None:
    config = _config(tmp_path, corpus, server, "again")
    assert _finish(config).returncode == 0
    sent = server.count
    again = _finish(config)
    assert again.returncode == 0
    assert server.count == sent
    assert "(12 resumed, 0 failed)" in again.stdout
    assert _tables(tmp_path / "again") == reference
