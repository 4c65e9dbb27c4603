"""`in_child`: what a crashing or failing test body looks like from the test run."""

from __future__ import annotations

import os
import signal

import pytest

from tests.isolation import in_child


def test_a_body_killed_by_a_signal_fails_that_test_and_the_run_goes_on() -> None:
    @in_child
    def crashes() -> None:
        os.kill(os.getpid(), signal.SIGSEGV)

    with pytest.raises(pytest.fail.Exception, match="killed by SIGSEGV"):
        crashes()


def test_an_assertion_in_the_child_fails_the_test_with_its_traceback() -> None:
    @in_child
    def fails(value: int) -> None:
        assert value == 2, "value was not 2"

    with pytest.raises(pytest.fail.Exception, match="value was not 2"):
        fails(1)
    fails(2)
