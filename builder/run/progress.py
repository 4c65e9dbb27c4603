"""Progress bars per stage with a live postfix, and the run's log file OUT/run.log.

Bars are only drawn on a terminal; in a batch job (no TTY) the same figures go to the log at
most every `log_every_s` seconds, so a long unattended run still shows that it moves.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

log = logging.getLogger(__name__)

LOG_NAME = "run.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_PERCENT_KEYS = frozenset({"cache_hit_rate", "cache", "pass_rate"})
_TOKEN_KEYS = frozenset({"tokens_saved", "saved", "tokens"})


def progress_enabled(configured: bool, stream: TextIO | None = None) -> bool:
    """Bars are drawn when the config allows it and the stream is a terminal."""
    stream = sys.stderr if stream is None else stream
    return configured and hasattr(stream, "isatty") and stream.isatty()


def format_postfix(values: dict[str, Any]) -> str:
    """`steps=12 passing=30 tokens_saved=12.3k cost=$0.0123 cache_hit_rate=45% errors=2`.

    `tokens_saved` is builder.report.savings.tokens_saved (best row per step), the figure the
    report and the dataset card show too.
    """
    return " ".join(f"{key}={_format_value(key, value)}" for key, value in values.items())


def _format_value(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key.startswith("cost") and isinstance(value, int | float):
        return f"${value:.4f}"
    if key in _PERCENT_KEYS and isinstance(value, float):
        return f"{value:.0%}"
    if key in _TOKEN_KEYS and isinstance(value, int | float):
        return _human(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _human(value: float) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if abs(value) >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:g}"


class StageProgress:
    """One stage's bar. `advance(n, **postfix)` moves it and updates the figures shown after it;
    postfix keys given earlier are kept until overwritten. The bar is drawn only when `enabled`
    and the stream (`file`, default stderr) is a terminal; otherwise figures go to the log."""

    def __init__(
        self,
        stage: str,
        total: int | None,
        enabled: bool,
        *,
        file: TextIO | None = None,
        position: int | None = None,
        log_every_s: float = 30.0,
    ) -> None:
        self.stage = stage
        self.total = total
        self.done = 0
        self.postfix: dict[str, Any] = {}
        self._log_every_s = log_every_s
        self._started = self._last_log = time.monotonic()
        self._bar: tqdm[Any] | None = None
        if progress_enabled(enabled, file):
            self._bar = tqdm(
                total=total,
                desc=stage,
                unit="item",
                file=file,
                position=position,
                dynamic_ncols=True,
                mininterval=0.5,
            )

    def advance(self, n: int = 1, **postfix: Any) -> None:
        """Count `n` more items done and refresh the postfix figures."""
        self.done += n
        self.postfix.update(postfix)
        if self._bar is not None:
            self._bar.set_postfix_str(format_postfix(self.postfix), refresh=False)
            self._bar.update(n)
        elif time.monotonic() - self._last_log >= self._log_every_s:
            self._last_log = time.monotonic()
            log.info("%s", self._line())

    def close(self) -> None:
        """Finish the bar and log the stage's final figures."""
        if self._bar is not None:
            self._bar.set_postfix_str(format_postfix(self.postfix), refresh=True)
            self._bar.close()
            self._bar = None
        elapsed = time.monotonic() - self._started
        log.info("%s done in %.1fs", self._line(), elapsed)

    def _line(self) -> str:
        total = "?" if self.total is None else str(self.total)
        figures = format_postfix(self.postfix)
        return f"{self.stage}: {self.done}/{total}" + (f" {figures}" if figures else "")

    def __enter__(self) -> StageProgress:
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
