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


SHARD_WORK_MODULES = ("builder.scrub", "builder.run.shard_io", "pyarrow.compute")
# scrubbed once at warm-up, so that the scrubber's patterns are compiled before the first shard
WARM_TEXT = "warm-up: api_key=abc123 ghp_0123456789abcdefghijklmnopqrstuvwxyzAB me@example.com"


def warm_shard_work(pool: Executor) -> None:
    """Have a worker import what shard preparation needs (the scrubber ~75 ms, pyarrow's
    compute functions ~45 ms): call it just before queueing the ingest, so that one worker
    does it while the other ingests, and the first shards find one worker ready."""
    pool.submit(_import_shard_work)


def _import_shard_work() -> None:
    for module in SHARD_WORK_MODULES:
        importlib.import_module(module)
    from builder.scrub import Scrubber

    Scrubber().scrub(WARM_TEXT)  # compiles its patterns (~10 ms of the first shard's load)


def ingest_then_warm(task_id: int, group: Any, out_dir: Path, rules: Any, scrub: Any) -> Any:
    """An ingest task (`builder.ingest.task.process_task`); then, in a thread of this worker
    while its summary goes back, the shard-work imports and, after the first task, the tables
    its first shard reads. So the worker that ingested is ready for the first shards too
    (`warm_shard_work` reaches only the idle one), and the ingest's end is not delayed."""
    from builder.ingest.task import process_task

    summary = process_task(task_id, group, out_dir, rules, scrub)
    threading.Thread(
        target=_warm_after_ingest, args=(task_id, out_dir), name="nap-warm", daemon=True
    ).start()
    return summary


def _warm_after_ingest(task_id: int, out_dir: Path) -> None:
    from builder.ingest.task import task_prefix

    _import_shard_work()
    if task_id != 0:
        return
    from builder.run.shard_tables import SHARD_TABLES

    prefix = task_prefix(task_id)
    trajectories = sorted((out_dir / "trajectories").glob(f"{prefix}-*.parquet"))
    if trajectories:
        steps = sorted((out_dir / "steps").glob(f"{prefix}-*.parquet"))
        SHARD_TABLES.warm(trajectories[0], steps)


def warm_report(pool: Executor) -> None:
    """Have the report's process import the report's modules in the background: call it once
    the ingest is done (during the ingest, both cores are the ingest's and the parent's)."""
    pool.submit(_start_report_imports)


def _start_report_imports() -> None:
    threading.Thread(target=_import_report, name="nap-report-imports", daemon=True).start()


_idle_imports: int | None = None  # the native id of the report-import thread while it idles
_idle_lock = threading.Lock()
REPORT_IMPORT_NICE = 10  # where idle priority could not be left again


def _import_report() -> None:
    """The report's polars (~0.4 s of CPU), loaded in the background at idle priority (Linux
    `SCHED_IDLE`, per thread), so that it takes only CPU the run leaves unused (at nice 10 it
    still took time slices from the run's loop). `report_now` gives it normal priority back
    when the report is wanted, so other work on the machine cannot starve the report; where
    this process may not do that (no root or CAP_SYS_NICE, RLIMIT_NICE 0), it runs at nice 10."""
    global _idle_imports
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError), _idle_lock:
            if _idle_is_reversible():
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                _idle_imports = threading.get_native_id()
            else:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), REPORT_IMPORT_NICE)
    try:
        for module in ("builder.run.finish", "builder.report.build", "builder.report.plots"):
            importlib.import_module(module)
        import polars as pl

        pl.DataFrame({"n": [1]}).lazy().select(pl.len()).collect()  # starts polars' pool
    finally:
        with _idle_lock:
            _idle_imports = None


def _idle_is_reversible() -> bool:
    """Whether a thread of this process may come back from `SCHED_IDLE`: tried on a thread of
    its own, which then ends."""
    done: list[bool] = []

    def probe() -> None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            done.append(True)

    thread = threading.Thread(target=probe, name="nap-idle-probe")
    thread.start()
    thread.join()
    return bool(done)


def report_now(report: Callable[..., T], *args: Any) -> T:
    """`report(*args)` in the report's process, its import thread (if still at work) back at
    normal priority first: the report waits for the modules that thread is importing."""
    with _idle_lock:
        if _idle_imports is not None:
            with contextlib.suppress(OSError, AttributeError):
                os.sched_setscheduler(_idle_imports, os.SCHED_OTHER, os.sched_param(0))
    return report(*args)


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
