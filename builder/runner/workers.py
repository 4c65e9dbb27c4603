"""Worker processes for a shard's CPU work: loading and scrubbing its steps, writing its tables.

In threads, that work held the GIL against the event loop: at 64 requests in flight the loop
waited for it on every socket call, and fewer requests were in flight (benchmarks/bench_run.py).
Forked processes run it beside the loop instead. They are forked before the run installs its
signal handlers and opens any connection, and they ignore SIGINT: a Ctrl-C is the parent's to
handle (finish the shards in flight, see `schedule._Stopper`), and a child must not write to
the parent's signal wake-up socket it inherited.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
WORKERS = 2


def _quiet_child() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)


def _ready() -> bool:
    return True


def start_pool(workers: int = WORKERS) -> ProcessPoolExecutor:
    """A pool of forked workers, started now (while the process has no other threads)."""
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_quiet_child)
    for future in [pool.submit(_ready) for _ in range(workers)]:
        future.result()
    return pool


async def off_loop(pool: Executor | None, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in the pool's processes, or in a thread when there is no pool (Ray
    workers, which are processes of their own)."""
    if pool is None:
        return await asyncio.to_thread(fn, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
