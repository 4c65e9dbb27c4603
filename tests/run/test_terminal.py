"""A run held by a tokens-per-minute limit, watched in a real 80-column terminal (tmux): the
bar counts eligible steps and the status line says why the run waits, each within a line."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 80, 24

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux; `make test-deps`)"
)


def _tmux(*args: str, socket: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


def test_a_run_held_by_a_tpm_limit_shows_the_wait_and_its_reason_in_80_columns(
    tmp_path: Path,
) -> None:
    socket = f"nap-{os.getpid()}"
    with nap_server() as server:
        config = tmp_path / "held.yaml"
        config.write_text(
            run_config(
                SAMPLES,
                server.base_url,
                tmp_path / "out",
                limits={"concurrency": 4, "tokens_per_minute": 2000},
                output={"progress": True},
            )
        )
        command = (
            f"cd {shlex.quote(str(ROOT))} && PYTHONPATH={shlex.quote(str(ROOT))} "
            f"{shlex.quote(sys.executable)} -m builder.cli run {shlex.quote(str(config))}; "
            "sleep 600"
        )
        _tmux(
            "new-session", "-d", "-s", "run", "-x", str(WIDTH), "-y", str(HEIGHT), command,
            socket=socket,
        )  # fmt: skip
        try:
            screen, deadline = "", time.monotonic() + 120
            while time.monotonic() < deadline:
                screen = _tmux("capture-pane", "-p", "-t", "run", socket=socket)
                if "next in" in screen and "steps" in screen:
                    break
                time.sleep(0.25)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], check=False, timeout=30)
    lines = screen.splitlines()
    assert all(len(line) <= WIDTH for line in lines)
    [wait] = [line for line in lines if "waiting:" in line]
    assert wait.startswith("waiting: tokens-per-minute limit 2k/min, next in "), screen
    [bar] = [line for line in lines if line.startswith("steps")]
    eligible = _eligible_steps(tmp_path / "out")
    assert f"/{eligible} [" in bar, screen
    assert "in flight" in wait  # the status line still fits the concurrency figure


def _eligible_steps(out: Path) -> int:
    summary = json.loads((out / "ingest_summary.json").read_text())
    return int(summary["total"]["eligible"])
