"""Stage progress bars, their postfix figures, and the OUT/run.log file."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest

from builder.run.progress import (
    StageProgress,
    close_run_logging,
    format_postfix,
    progress_enabled,
    setup_run_logging,
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_postfix_formats_cost_rates_and_token_counts() -> None:
    figures = {
        "steps": 12,
        "passing": 30,
        "tokens_saved": 12345,
        "cost": 0.01234,
        "cache_hit_rate": 0.456,
        "errors": 2,
        "pending": None,
    }
    assert format_postfix(figures) == (
        "steps=12 passing=30 tokens_saved=12.3k cost=$0.0123 cache_hit_rate=46% errors=2 pending=-"
    )


def test_bars_are_drawn_only_on_a_terminal_when_configured() -> None:
    assert progress_enabled(True, _Terminal())
    assert not progress_enabled(False, _Terminal())
    assert not progress_enabled(True, io.StringIO())


def test_an_enabled_bar_shows_the_count_and_the_latest_figures() -> None:
    stream = _Terminal()
    with StageProgress("candidates", 10, True, file=stream) as bar:
        bar.advance(2, steps=2, passing=1)
        bar.advance(1, passing=3, cost=0.5)
    text = stream.getvalue()
    assert "candidates" in text
    assert "3/10" in text
    assert "steps=2 passing=3 cost=$0.5000" in text
    assert bar.done == 3


@pytest.mark.parametrize(
    ("configured", "stream"), [(False, _Terminal()), (True, io.StringIO())], ids=["off", "no-tty"]
)
def test_a_disabled_bar_writes_nothing_and_logs_its_figures(
    caplog: pytest.LogCaptureFixture, configured: bool, stream: io.StringIO
) -> None:
    caplog.set_level(logging.INFO, logger="builder.run.progress")
    bar = StageProgress("judgements", 4, configured, file=stream, log_every_s=0.0)
    bar.advance(1, errors=0)
    bar.advance(3, errors=1)
    bar.close()
    assert stream.getvalue() == ""
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "judgements: 1/4 errors=0"
    assert messages[1] == "judgements: 4/4 errors=1"
    assert re.fullmatch(r"judgements: 4/4 errors=1 done in \d+\.\ds", messages[-1])


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
