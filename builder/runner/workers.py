"""Worker processes for a shard's CPU work (loading and scrubbing its steps, writing its
tables) and for the report at the end.

In threads, that work held the GIL against the event loop: at 64 requests in flight the loop
waited for it on every socket call, and fewer requests were in flight (benchmarks/bench_run.py).
Forked processes run it beside the loop instead. They are forked before the run installs its
signal handlers and opens any connection, and they ignore SIGINT: a Ctrl-C is the parent's to
handle (finish the shards in flight, see `schedule._Stopper`), and a child must not write to
the parent's signal wake-up socket it inherited.
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


def _worker_start() -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    # What only workers use is imported here, on the other core, while the parent sends
    # requests: the scrubber now (the first shard needs it), the report's polars (~0.4 s)
    # in a thread, so that the first shards are not kept waiting for it.
    importlib.import_module("builder.scrub")
    if report_in_worker():
        threading.Thread(target=_import_report, name="nap-report-imports", daemon=True).start()


def _import_report() -> None:
    importlib.import_module("builder.runner.report")
    importlib.import_module("builder.runner.plots")


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
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start)
    try:
        pool.submit(_ready)  # forks the workers now
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


async def off_loop(pool: Executor | None, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in the pool's processes, or in a thread when there is no pool (Ray
    workers, which are processes of their own)."""
    if pool is None:
        return await asyncio.to_thread(fn, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
