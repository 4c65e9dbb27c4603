"""Run a test's body in a forked child, so a native crash fails that test, not the test run.

Why: llama.cpp runs inside the process that calls it; a crash in its native code (a CPU path
the build should not have) would take pytest down with every other result. The child reports
an assertion or exception back through a pipe; a child killed by a signal fails the test with
the signal's name.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import pytest

CHILD_TIMEOUT_S = 600.0


def in_child(test: Callable[..., None]) -> Callable[..., None]:
    """Decorate a test (its fixtures are resolved in the parent, its body runs in a child)."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_run, args=(test, args, kwargs, send), daemon=True)
        child.start()
        send.close()
        failure = _answer(receive)
        child.join(10)
        code = child.exitcode
        if code is not None and code < 0:
            pytest.fail(f"the test's process was killed by {signal.Signals(-code).name}")
        if failure:
            pytest.fail(failure, pytrace=False)

    return wrapper


def _answer(receive: Connection) -> str:
    if not receive.poll(CHILD_TIMEOUT_S):
        return f"the test's process did not finish within {CHILD_TIMEOUT_S:.0f} s"
    try:
        return str(receive.recv())
    except EOFError:
        return "the test's process ended without a result"  # the exit code tells why


def _run(test: Callable[..., None], args: Any, kwargs: Any, send: Connection) -> None:
    try:
        test(*args, **kwargs)
    except BaseException:
        send.send(traceback.format_exc())
    else:
        send.send("")
    finally:
        send.close()
        os._exit(0)  # no pytest or atexit teardown in the child
