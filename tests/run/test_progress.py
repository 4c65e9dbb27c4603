"""The run's progress in steps, its status line (waits, retries, cost), and OUT/run.log."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from pathlib import Path

import pytest

from builder.llm.limits import Hold, RateLimiter
from builder.run.progress import (
    RunProgress,
    close_run_logging,
    progress_enabled,
    setup_run_logging,
)
from builder.run.status_line import SEPARATOR, Field, Status, fields, fit, status_text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bars_are_drawn_only_on_a_terminal_when_configured() -> None:
    assert progress_enabled(True, _Terminal())
    assert not progress_enabled(False, _Terminal())
    assert not progress_enabled(True, io.StringIO())


HELD = Hold("tokens-per-minute", 40_000, need=2_100, available=400, seconds=12.4)
BUSY = Status(
    in_flight=64,
    concurrency=64,
    hold=HELD,
    cost_usd=0.42,
    budget_usd=5.0,
    passing=210,
    tokens_saved=12_345,
    control="80%",
    cache_hit_rate=0.25,
    errors=2,
)


def test_the_status_puts_the_wait_first_and_fits_by_dropping_whole_fields() -> None:
    assert fields(BUSY)[0][:2] == (
        "waiting: tokens-per-minute limit 40k/min, next in 12 s",
        "waiting: tokens-per-minute limit, 12 s",
    )
    forms = {form for field in fields(BUSY) for form in field[:2]}
    for width in (40, 60, 80, 120, 200):
        line = status_text(BUSY, width)
        assert len(line) <= width
        assert all(part in forms for part in line.split(SEPARATOR))  # none cut
        assert line.startswith("waiting: tokens-per-minute limit")
    assert status_text(BUSY, 80) == (
        "waiting: tokens-per-minute limit 40k/min, next in 12 s · in flight 64/64 · $0.42"
    )
    wide = status_text(BUSY, 400)
    assert wide.split(SEPARATOR) == [field.text for field in fields(BUSY)]  # all that fit


def test_backoff_after_errors_is_shown_with_its_cause() -> None:
    status = Status(backing_off=12, last_error="rate_limit", in_flight=3, concurrency=8)
    assert fields(status)[0][:2] == ("retrying: 12 backing off after rate_limit", "retrying")
    first, second = Field("abcdef", "abcd", True), Field("gh", "gh", True)
    assert fit([first, second], 9) == "abcd · gh"  # short, so that the essential one shows
    assert fit([first, second], 11) == "abcdef · gh"  # full when there is room
    three = [Field("ab", "ab"), Field("cdefgh", "cdefgh"), Field("i", "i")]
    assert fit(three, 6) == "ab · i"  # one left out, never cut
    assert fit([Field("abcdef", "abcde")], 4) == "abc…"  # cut only when nothing fits


def test_on_a_terminal_the_bar_counts_steps_and_the_status_line_shows(monkeypatch) -> None:
    stream = _Terminal()
    monkeypatch.setattr("builder.run.progress.terminal_width", lambda _: 80)
    with RunProgress(320, 20, True, file=stream) as progress:
        progress.step_done(100)
        progress.show(BUSY)
    text = stream.getvalue()
    assert "120/320" in text and "38%" in text
    assert "waiting: tokens-per-minute limit" in text


@pytest.mark.parametrize(
    ("configured", "stream"), [(False, _Terminal()), (True, io.StringIO())], ids=["off", "no-tty"]
)
def test_without_a_terminal_the_same_figures_go_to_the_log(
    caplog: pytest.LogCaptureFixture, configured: bool, stream: io.StringIO
) -> None:
    caplog.set_level(logging.INFO, logger="builder.run.progress")
    progress = RunProgress(4, 0, configured, file=stream, log_every_s=0.0)
    progress.step_done(1)
    progress.show(BUSY)
    progress.step_done(3)
    progress.close()
    assert stream.getvalue() == ""
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("steps 1/4 (25%), ")
    assert "waiting: tokens-per-minute limit 40k/min, next in 12 s" in messages[0]
    assert "$0.42 of $5.00" in messages[0] and "in flight 64/64" in messages[0]
    assert re.match(r"steps 4/4 \(100%\), .*; done in \d+\.\ds$", messages[-1])


def test_a_rate_limiter_says_what_its_first_waiter_waits_for() -> None:
    now = [0.0]
    sleeps: list[float] = []
    seen: list[Hold | None] = []
    limiter: RateLimiter

    async def sleep(seconds: float) -> None:
        seen.append(limiter.hold())
        sleeps.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(600, burst=600, clock=lambda: now[0], sleep=sleep, kind="tokens")
    assert limiter.hold() is None
    asyncio.run(limiter.acquire(600))  # the bucket is emptied
    asyncio.run(limiter.acquire(150))  # 150 tokens at 10/s: a 15 s wait
    assert sleeps == [pytest.approx(15.0)]
    assert seen == [Hold("tokens", 600, need=150, available=0.0, seconds=pytest.approx(15.0))]
    assert limiter.hold() is None  # nobody waits any more


def test_run_log_receives_builder_records_with_time_level_and_logger(tmp_path: Path) -> None:
    path = setup_run_logging(tmp_path)
    try:
        assert setup_run_logging(tmp_path) == path  # idempotent
        handlers = [
            h for h in logging.getLogger().handlers if getattr(h, "baseFilename", "") == str(path)
        ]
        assert len(handlers) == 1
        logging.getLogger("builder.stage").info("shard %d complete", 3)
        logging.getLogger("some.library").info("chatter that stays out")
        handlers[0].flush()
    finally:
        close_run_logging(path)
    assert path == (tmp_path / "run.log").resolve()
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO builder.stage: shard 3 complete", lines[0]
    )
    assert not [
        h for h in logging.getLogger().handlers if getattr(h, "baseFilename", "") == str(path)
    ]
