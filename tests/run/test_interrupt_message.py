"""The message after Ctrl-C says what the signal really did."""

from __future__ import annotations

from pathlib import Path

from builder.run.result import RunResult
from builder.run.schedule import _describe_interrupt, _Stopper


def interrupted(not_started: int, twice: bool = False) -> RunResult:
    stopper = _Stopper()
    stopper(2)  # SIGINT
    if twice:
        stopper(2)
    result = RunResult(Path("out"))
    _describe_interrupt(result, stopper, not_started)
    return result


def test_a_signal_after_every_shard_started_lets_the_run_complete_and_says_so() -> None:
    result = interrupted(not_started=0)
    assert result.stopped is None and result.exit_code == 0
    assert "stopped early" not in result.summary_text()
    assert "after every shard had started; run completed" in result.summary_text()


def test_a_signal_with_shards_left_says_how_many_were_not_started() -> None:
    result = interrupted(not_started=3)
    assert result.exit_code == 130
    assert "stopped early: interrupted: the shards in flight were finished" in (
        result.summary_text()
    )
    assert "3 shard(s) not started" in result.summary_text()


def test_a_second_signal_says_shards_were_abandoned() -> None:
    result = interrupted(not_started=2, twice=True)
    assert result.stopped == "interrupted"
    assert "interrupted twice" in result.summary_text()
