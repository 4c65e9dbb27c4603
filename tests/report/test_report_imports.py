"""The report's background imports (runner/workers.py): they run at idle priority while the run
goes on, and get normal priority back the moment the report is wanted (Linux scheduling, read
back from the kernel for the importing thread)."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import pytest

import builder.run.workers as workers

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux scheduling")


class HeldImport:
    """Blocks the import thread at its first module until released, recording its native id."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.tid = 0
        real = importlib.import_module

        def held(name: str, package: str | None = None) -> ModuleType:
            if name == "builder.run.finish" and not self.release.is_set():
                self.tid = threading.get_native_id()
                self.started.set()
                self.release.wait(30)
            return real(name, package)

        monkeypatch.setattr(workers.importlib, "import_module", held)


def policy_and_nice(tid: int) -> tuple[int, int]:
    return os.sched_getscheduler(tid), os.getpriority(os.PRIO_PROCESS, tid)


def test_report_imports_idle_until_the_report_is_wanted(monkeypatch: pytest.MonkeyPatch) -> None:
    if not workers._idle_is_reversible():
        pytest.skip("this process may not bring a thread back from SCHED_IDLE")
    held = HeldImport(monkeypatch)
    with ThreadPoolExecutor(1) as pool:
        workers.warm_report(pool)
        assert held.started.wait(10)
        assert policy_and_nice(held.tid)[0] == os.SCHED_IDLE
        # the report, run through report_now, finds the import thread at normal priority
        seen = workers.report_now(policy_and_nice, held.tid)
        assert seen == (os.SCHED_OTHER, 0)
        held.release.set()
    for thread in threading.enumerate():
        if thread.name == "nap-report-imports":
            thread.join(30)
    assert workers._idle_imports is None  # the thread is done: nothing is left to raise


def test_without_the_right_to_leave_idle_the_imports_run_at_nice_10(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workers, "_idle_is_reversible", lambda: False)
    held = HeldImport(monkeypatch)
    with ThreadPoolExecutor(1) as pool:
        workers.warm_report(pool)
        assert held.started.wait(10)
        assert policy_and_nice(held.tid) == (os.SCHED_OTHER, workers.REPORT_IMPORT_NICE)
        assert workers.report_now(lambda: "report") == "report"
        held.release.set()
