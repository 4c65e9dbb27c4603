"""The run's progress in eligible steps, its status line, and the log file OUT/run.log.

The bar and the status line are drawn only on a terminal; in a batch job (no TTY) the same
figures go to the log at most every `output.log_every_s` seconds, so a long unattended run
still shows that it moves, and why it is slow when it is.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from builder.run.status_line import SEPARATOR, Status, full_text, status_text

log = logging.getLogger(__name__)

LOG_NAME = "run.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
STEP_BAR = (
    "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"
)


def progress_enabled(configured: bool, stream: TextIO | None = None) -> bool:
    """Bars are drawn when the config allows it and the stream is a terminal."""
    stream = sys.stderr if stream is None else stream
    return configured and hasattr(stream, "isatty") and stream.isatty()


def terminal_width(stream: TextIO, default: int = 80) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return default


class RunProgress:
    """Eligible steps done of the total, with the rate and the time left, and under it the
    status line (`status_line`): why the run waits, requests in flight, cost against the
    budget, yield. On a terminal both lines redraw in place and fit its width; otherwise (a
    batch job, or `output.progress: false`) the same figures go to the log every
    `log_every_s` seconds, whole."""

    def __init__(
        self,
        total: int,
        done: int,
        enabled: bool,
        *,
        file: TextIO | None = None,
        log_every_s: float = 30.0,
    ) -> None:
        self.total = total
        self.done = done
        self.file = sys.stderr if file is None else file
        self.status = Status()
        self._log_every_s = log_every_s
        self._started = self._last_log = time.monotonic()
        self._done_at_start = done
        self._bar: tqdm[Any] | None = None
        self._line: tqdm[Any] | None = None
        self._redirect: contextlib.AbstractContextManager[None] | None = None
        if progress_enabled(enabled, self.file):
            # log lines (warnings, retries) are printed above the two lines, not through them
            self._redirect = logging_redirect_tqdm()
            self._redirect.__enter__()
            self._bar = tqdm(
                total=total,
                initial=done,
                desc="steps",
                unit="step",
                position=0,
                bar_format=STEP_BAR,
                file=self.file,
                dynamic_ncols=True,
                mininterval=0.2,
            )
            self._line = tqdm(
                total=0,
                bar_format="{desc}",
                position=1,
                leave=False,
                file=self.file,
                dynamic_ncols=True,
                mininterval=0.2,
            )

    def step_done(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def show(self, status: Status) -> None:
        """Refresh the status line (on a terminal), or log the figures when it is time."""
        self.status = status
        if self._line is not None:
            self._line.set_description_str(status_text(status, terminal_width(self.file) - 1))
        elif time.monotonic() - self._last_log >= self._log_every_s:
            self._last_log = time.monotonic()
            log.info("%s", self.log_line())

    def log_line(self) -> str:
        """`steps 120/320 (38%), 9.8/s, ~20 s left · waiting: ... · in flight 64/64 · ...`."""
        elapsed = time.monotonic() - self._started
        rate = (self.done - self._done_at_start) / elapsed if elapsed > 0 else 0.0
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        head = f"steps {self.done}/{self.total}{share}, {rate:.3g}/s"
        if rate > 0 and self.total > self.done:
            head += f", ~{(self.total - self.done) / rate:.0f} s left"
        return SEPARATOR.join([head, full_text(self.status)])

    def close(self) -> None:
        """Finish the bar and log the final figures."""
        if self._line is not None:
            self._line.close()
            self._line = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._redirect is not None:
            self._redirect.__exit__(None, None, None)
            self._redirect = None
        elapsed = time.monotonic() - self._started
        log.info("%s; done in %.1fs", self.log_line(), elapsed)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def setup_run_logging(out_dir: Path, level: int = logging.INFO) -> Path:
    """Append the run's log records to OUT/run.log (a resumed run continues the same file).

    The handler sits on the root logger; only the `builder` logger is lowered to `level`, so
    third-party libraries stay at their own level. Calling it twice adds one handler only.
    """
    path = (Path(out_dir) / LOG_NAME).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == path:
            return path
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.setLevel(level)
    root.addHandler(handler)
    package = logging.getLogger("builder")
    if package.level == logging.NOTSET or package.level > level:
        package.setLevel(level)
    return path


def close_run_logging(path: Path) -> None:
    """Detach and close the OUT/run.log handler added by `setup_run_logging`."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == path:
            root.removeHandler(handler)
            handler.close()
