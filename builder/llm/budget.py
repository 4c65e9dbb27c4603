"""The spending ledger of an output folder: reserve before sending, settle from the usage.

A request reserves its worst-case cost (prompt tokens at the highest input rate plus
`max_tokens` x samples at the output rate) once it holds its concurrency slot, just before it
is sent; the reply settles the reservation at the reported usage. A reservation that would
take spent + reserved above the limit is refused, so the run stops scheduling, and spending
can pass the limit only by what reserved requests cost above their reservation (nothing, when
the estimate of their prompt holds). What was spent is persisted in `OUT/_state/budget.json`:
`limits.budget_usd` is the total for the folder across invocations and resumes.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.errors import BudgetExceededError, ConfigError
from builder.llm.protocol import Usage

SAVE_EVERY_S = 0.1  # a crash loses at most this much of the record (the cache keeps answers)


@dataclass(frozen=True)
class Reservation:
    usd: float
    tokens: int


class Budget:
    """Limits in USD and/or tokens (prompt + completion; None: no limit), with the ledger of
    what was spent and what is reserved by requests in flight."""

    def __init__(
        self,
        max_usd: float | None = None,
        max_tokens: int | None = None,
        *,
        path: Path | None = None,
    ) -> None:
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        self.path = path
        self.spent_usd = 0.0
        self.spent_tokens = 0
        self.reserved_usd = 0.0
        self.reserved_tokens = 0
        self.peak_reserved_usd = 0.0
        self.largest_reservation_usd = 0.0
        self.refused = 0
        self.stopped_at_usd: float | None = None  # the limit a refusal was made at
        self.stopped_at_tokens: int | None = None
        self._saved_at = 0.0
        self._dirty = False
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
                self.spent_usd = float(data.get("spent_usd", 0.0))
                self.spent_tokens = int(data.get("spent_tokens", 0))
                self.stopped_at_usd = data.get("stopped_at_usd")
                self.stopped_at_tokens = data.get("stopped_at_tokens")
            except (ValueError, TypeError, AttributeError) as exc:
                raise ConfigError(
                    f"{path}: unreadable budget ledger ({exc}); it records what this output "
                    "folder has spent: fix it, or delete it to count from zero"
                ) from None
        self.spent_before_usd = self.spent_usd

    def reserve(self, usd: float, tokens: int) -> Reservation:
        """Hold `usd` / `tokens` for a request about to be sent, or raise
        `BudgetExceededError` when that could take spending past a limit. Once refused at a
        limit, the folder stays stopped at that limit (a rerun sends nothing) until the
        limit is raised."""
        if self.max_usd is not None and (
            self.spent_usd + self.reserved_usd + usd > self.max_usd
            or (self.stopped_at_usd is not None and self.max_usd <= self.stopped_at_usd)
        ):
            self._refuse("usd")
            raise BudgetExceededError(
                f"budget reached: ${self.spent_usd:.4f} spent in this output folder "
                f"(+${self.reserved_usd:.4f} reserved in flight) of limits.budget_usd="
                f"${self.max_usd:.4f}, and the next request may cost up to ${usd:.4f}; no new "
                "requests are sent. Raise it (--set limits.budget_usd=...) and rerun: cached "
                "answers are not paid again."
            )
        if self.max_tokens is not None and (
            self.spent_tokens + self.reserved_tokens + tokens > self.max_tokens
            or (self.stopped_at_tokens is not None and self.max_tokens <= self.stopped_at_tokens)
        ):
            self._refuse("tokens")
            raise BudgetExceededError(
                f"budget reached: {self.spent_tokens} tokens spent in this output folder "
                f"(+{self.reserved_tokens} reserved in flight) of "
                f"limits.budget_tokens={self.max_tokens}, and the next request may take up to "
                f"{tokens}; no new requests are sent. Raise it (--set limits.budget_tokens=...) "
                "and rerun: cached answers are not paid again."
            )
        self.reserved_usd += usd
        self.reserved_tokens += tokens
        self.peak_reserved_usd = max(self.peak_reserved_usd, self.reserved_usd)
        self.largest_reservation_usd = max(self.largest_reservation_usd, usd)
        return Reservation(usd, tokens)

    def _refuse(self, unit: str) -> None:
        self.refused += 1
        if unit == "usd":
            self.stopped_at_usd = self.max_usd
        else:
            self.stopped_at_tokens = self.max_tokens
        self._dirty = True
        self.save()

    def settle(self, reservation: Reservation, usage: Usage | None, cost_usd: float) -> None:
        """Replace the reservation by what the reply reported (None: nothing billed)."""
        self.reserved_usd = max(0.0, self.reserved_usd - reservation.usd)
        self.reserved_tokens = max(0, self.reserved_tokens - reservation.tokens)
        if usage is None:
            return
        self.spent_usd += cost_usd
        self.spent_tokens += usage.prompt_tokens + usage.completion_tokens
        self._dirty = True
        if time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self.save()

    def save(self) -> None:
        """Write the ledger atomically (a no-op without a path or news)."""
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(self.as_dict(), indent=1))
        os.replace(tmp, self.path)
        self._saved_at = time.monotonic()
        self._dirty = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "spent_usd": self.spent_usd,
            "spent_tokens": self.spent_tokens,
            "max_usd": self.max_usd,
            "max_tokens": self.max_tokens,
            "spent_this_invocation_usd": self.spent_usd - self.spent_before_usd,
            "largest_reservation_usd": self.largest_reservation_usd,
            "peak_reserved_usd": self.peak_reserved_usd,
            "refused_requests": self.refused,
            "stopped_at_usd": self.stopped_at_usd,
            "stopped_at_tokens": self.stopped_at_tokens,
        }


def ledger_path(out_dir: Path) -> Path:
    return out_dir / "_state" / "budget.json"


def budget_section(out_dir: Path) -> dict[str, Any]:
    """The report's budget figures: the folder's total spend against the limit, and the bound
    on overshoot (requests reserved at once, each at its worst case)."""
    path = ledger_path(out_dir)
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    section = {k: data.get(k) for k in ("spent_usd", "max_usd", "spent_tokens", "max_tokens")}
    section |= {
        "largest reservation (USD)": data.get("largest_reservation_usd"),
        "most reserved at once (USD)": data.get("peak_reserved_usd"),
        "requests refused by the budget": data.get("refused_requests"),
        "overshoot bound": "spending can pass the limit only by what requests already "
        "reserved cost above their worst-case reservation (prompt at 3 characters per token "
        "at the highest input rate, max_tokens x samples at the output rate)",
    }
    return section
