"""Worker processes for the ingest tasks, a shard's file work (loading and scrubbing its steps,
writing its tables) and the report at the end.

In threads, that work held the GIL against the event loop: at 64 requests in flight the loop
waited for it on every socket call, and fewer requests were in flight (benchmarks/bench_run.py).
Forked processes run it beside the loop instead. They are forked at the start of a run, before
the parent imports the model clients (so the ingest overlaps those imports), installs its
signal handlers or opens any connection, and they ignore SIGINT: a Ctrl-C is the parent's to
handle (finish the shards in flight, see `schedule._Stopper`), and a child must not write to
the parent's signal wake-up socket it inherited. If the parent leaves the pool with an error
(a Ctrl-C during the ingest), the workers are stopped rather than waited for: everything they
write is atomic, and an unfinished ingest or shard is redone on resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
WORKERS = 2


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent() -> None:
    """A worker must not outlive the run: after a kill -9 of the run it would go on writing
    shard tables behind the resumed run's back. Linux: the kernel kills it with its parent;
    elsewhere, a thread watches for the parent to go."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() == parent:  # the parent did not die before the call
                return
            os._exit(1)
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="nap-parent-watch", daemon=True).start()


def _child_start() -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)


SHARD_WORK_MODULES = ("builder.scrub", "builder.runner.shard_io", "pyarrow.compute")


def warm_shard_work(pool: Executor) -> None:
    """Have a worker import what shard preparation needs (the scrubber ~75 ms, pyarrow's
    compute functions ~45 ms): call it just before queueing the ingest, so that one worker
    does it while the other ingests, and the first shards find one worker ready."""
    pool.submit(_import_shard_work)


def _import_shard_work() -> None:
    for module in SHARD_WORK_MODULES:
        importlib.import_module(module)


def ingest_then_warm(task_id: int, group: Any, out_dir: Path, rules: Any) -> Any:
    """An ingest task (`builder.ingest_task.process_task`); then, in a thread of this worker
    while its summary goes back, the shard-work imports and, after the first task, the tables
    its first shard reads. So the worker that ingested is ready for the first shards too
    (`warm_shard_work` reaches only the idle one), and the ingest's end is not delayed."""
    from builder.ingest_task import process_task

    summary = process_task(task_id, group, out_dir, rules)
    threading.Thread(
        target=_warm_after_ingest, args=(task_id, out_dir), name="nap-warm", daemon=True
    ).start()
    return summary


def _warm_after_ingest(task_id: int, out_dir: Path) -> None:
    from builder.ingest_task import task_prefix

    _import_shard_work()
    if task_id != 0:
        return
    from builder.runner.shard_tables import SHARD_TABLES

    prefix = task_prefix(task_id)
    trajectories = sorted((out_dir / "trajectories").glob(f"{prefix}-*.parquet"))
    if trajectories:
        steps = sorted((out_dir / "steps").glob(f"{prefix}-*.parquet"))
        SHARD_TABLES.warm(trajectories[0], steps)


REPORT_IMPORT_NICE = 10  # ~1/10 of a core when the run's own work wants both cores


def warm_report(pool: Executor) -> None:
    """Have the report's process import the report's modules in the background: call it once
    the ingest is done (during the ingest, both cores are the ingest's and the parent's)."""
    pool.submit(_start_report_imports)


def _start_report_imports() -> None:
    threading.Thread(target=_import_report, name="nap-report-imports", daemon=True).start()


def _import_report() -> None:
    """The report's polars (~0.4 s of CPU), loaded at a lower priority (Linux: per thread), so
    that it fills idle CPU during the run instead of slowing it; the report, at the end, finds
    it loaded."""
    if sys.platform.startswith("linux"):  # elsewhere a thread id is not a PRIO_PROCESS id
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), REPORT_IMPORT_NICE)
    for module in ("builder.runner.finish", "builder.runner.report", "builder.runner.plots"):
        importlib.import_module(module)
    import polars as pl

    pl.DataFrame({"n": [1]}).lazy().select(pl.len()).collect()  # starts polars' thread pool


def report_in_worker() -> bool:
    """Whether the report may run in a worker: only when the parent had not imported polars
    before forking. Polars' thread pool does not survive a fork, and a forked child that uses
    an inherited polars deadlocks (as when `run_pipeline` is called from a process, such as a
    notebook or a test session, that used polars already); such a parent writes the report."""
    return "polars" not in sys.modules


def _ready() -> bool:
    return True


@contextlib.contextmanager
def worker_pool(workers: int = WORKERS) -> Iterator[ProcessPoolExecutor]:
    """A pool of forked workers, forked now: call it while the process has no other threads,
    connections or signal handlers."""
    with _forked(workers, _child_start) as pool:
        yield pool


@contextlib.contextmanager
def report_pool() -> Iterator[ProcessPoolExecutor | None]:
    """One forked process for the report, which imports its modules in the background; None
    when the report must run in the parent (`report_in_worker`). Call it with `worker_pool`."""
    if not report_in_worker():
        yield None
        return
    with _forked(1, _child_start) as pool:
        yield pool


@contextlib.contextmanager
def _forked(workers: int, initializer: Callable[[], None]) -> Iterator[ProcessPoolExecutor]:
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=initializer)
    try:
        pool.submit(_ready)  # forks the workers now
        yield pool
    except BaseException:
        _stop(pool)
        raise
    else:
        pool.shutdown(wait=True, cancel_futures=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Leave on an error without waiting for the tasks in flight (see the module docstring)."""
    processes = list(getattr(pool, "_processes", {}).values())  # no public handle before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(5)


async def off_loop(pool: Executor | None, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in the pool's processes, or in a thread when there is no pool (Ray
    workers, which are processes of their own)."""
    if pool is None:
        return await asyncio.to_thread(fn, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
