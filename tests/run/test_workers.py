"""The run's worker processes: they die with the run, and ignore the Ctrl-C the run handles."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Holds a pool; prints its workers' pids after running tasks on it, then again for every line
# it reads: a pool whose workers died says so (BrokenProcessPool) or shows other pids.
HOLD_A_POOL = """
import multiprocessing, os, sys
from builder.run.workers import worker_pool
with worker_pool() as pool:
    def pids():
        for _ in range(8):
            pool.submit(os.getpid).result()
        return " ".join(map(str, sorted(p.pid for p in multiprocessing.active_children())))
    print(pids(), flush=True)
    for _ in sys.stdin:
        try:
            print(pids(), flush=True)
        except Exception as exc:
            print(type(exc).__name__, flush=True)
"""


def _alive(pid: int) -> bool:
    """Running (not exited, not a zombie); a process may exit between any two reads."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # `pid (comm) STATE ...`


def _start_pool_holder() -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_POOL],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert workers and all(_alive(p) for p in workers)
    return proc, workers


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_workers_die_with_a_killed_run() -> None:
    """After a kill -9 of the run, a surviving worker would go on writing shard tables
    behind the resumed run's back."""
    proc, workers = _start_pool_holder()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _gone_within(workers, 5), f"workers {workers} outlived the run"


def test_workers_ignore_sigint() -> None:
    """Ctrl-C reaches the whole process group; the run finishes its shards in flight, so its
    workers must stay to write them."""
    proc, workers = _start_pool_holder()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for pid in workers:
            os.kill(pid, signal.SIGINT)
        # the signals are pending before the next tasks reach the workers: a worker that
        # did not ignore SIGINT is gone (BrokenProcessPool) or replaced (other pids) by now
        proc.stdin.write("again\n")
        proc.stdin.flush()
        assert [int(p) for p in proc.stdout.readline().split()] == workers
        assert all(_alive(p) for p in workers)
    finally:
        proc.kill()
        proc.wait()
    assert _gone_within(workers, 5)


LEAVE_WITH_AN_ERROR = """
import multiprocessing, os, sys, time
from builder.run.workers import worker_pool
try:
    with worker_pool() as pool:
        pool.submit(time.sleep, 60)  # an ingest task still running
        pool.submit(os.getpid).result()
        pids = [p.pid for p in multiprocessing.active_children()]
        print(" ".join(map(str, sorted(pids))), flush=True)
        raise KeyboardInterrupt  # a Ctrl-C during the ingest
except KeyboardInterrupt:
    print("left", flush=True)
"""


def test_leaving_the_pool_with_an_error_stops_the_workers_without_waiting() -> None:
    """A Ctrl-C during the ingest must not wait for the ingest to finish in the workers
    (their writes are atomic; the ingest is redone on resume)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LEAVE_WITH_AN_ERROR],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = done.stdout.split("\n")
    assert done.returncode == 0 and lines[1] == "left", done.stderr
    assert time.monotonic() - started < 30  # the 60 s task was not waited for
    workers = [int(p) for p in lines[0].split()]
    assert len(workers) == 2 and _gone_within(workers, 5)
