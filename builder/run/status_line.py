"""The run's status line: what it is doing besides counting steps, fitted to the terminal.

Pure: a `Status` snapshot in, text out. Fields come in order of use to someone watching a
slow run (why it waits first, then requests in flight and cost against the budget, then the
yield figures); a field that does not fit is dropped whole, never cut, so an 80-column
terminal shows fewer figures, each of them readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from builder.llm.limits import Hold

SEPARATOR = " · "


@dataclass(frozen=True)
class Status:
    in_flight: int = 0
    concurrency: int = 0
    queued: int = 0  # requests waiting for a slot
    hold: Hold | None = None  # the rate limit holding requests back, if any
    backing_off: int = 0  # requests waiting to retry after an error
    last_error: str | None = None
    cost_usd: float = 0.0
    budget_usd: float | None = None
    passing: int = 0
    tokens_saved: int = 0
    control: str = "-"  # the control's pass rate so far
    cache_hit_rate: float | None = None
    errors: int = 0


def human(value: float) -> str:
    """12345 -> 12.3k; 40000 -> 40k; 2_100_000 -> 2.1M."""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if abs(value) >= size:
            return f"{value / size:.1f}".removesuffix(".0") + unit
    return f"{value:g}"


def waiting(hold: Hold) -> str:
    """`waiting: tokens-per-minute limit 40k/min, next in 12 s`."""
    return f"waiting: {hold.kind} limit {human(hold.per_minute)}/min, next in {_in(hold)}"


def _in(hold: Hold) -> str:
    return f"{hold.seconds:.0f} s" if hold.seconds >= 1 else "<1 s"


class Field(NamedTuple):
    text: str
    short: str  # for a narrow terminal
    essential: bool = False  # kept (in short form if need be) before any other figure


def fields(status: Status) -> list[Field]:
    """The status figures, most useful first, each with a shorter form."""
    shown: list[Field] = []
    if status.hold is not None:
        short = f"waiting: {status.hold.kind} limit, {_in(status.hold)}"
        shown.append(Field(waiting(status.hold), short, essential=True))
    if status.backing_off:
        why = f" after {status.last_error}" if status.last_error else ""
        shown.append(Field(f"retrying: {status.backing_off} backing off{why}", "retrying", True))
    flight = f"in flight {status.in_flight}/{status.concurrency}"
    shown.append(Field(flight, flight, essential=True))
    if status.budget_usd is not None:
        money = f"${status.cost_usd:.2f} of ${status.budget_usd:.2f}"
        shown.append(Field(money, f"${status.cost_usd:.2f}", essential=True))
    else:
        shown.append(Field(f"${status.cost_usd:.4f}", f"${status.cost_usd:.2f}", essential=True))
    shown.append(_same(f"passing {status.passing}"))
    shown.append(_same(f"saved {human(status.tokens_saved)} tok"))
    shown.append(_same(f"control {status.control}"))
    if status.queued:
        shown.append(_same(f"queued {status.queued}"))
    if status.cache_hit_rate is not None:
        shown.append(_same(f"cache {status.cache_hit_rate:.0%}"))
    if status.errors:
        shown.append(_same(f"errors {status.errors}"))
    return shown


def _same(text: str) -> Field:
    return Field(text, text)


def fit(parts: Sequence[Field], width: int) -> str:
    """As many parts as fit in `width` columns, in order, each whole or in its short form:
    a part takes its full form only when the short forms of the essential parts after it
    still fit, and a part that fits in no form is left out, never cut. Only a first part
    that fits in no form is cut (a very narrow terminal), so the most useful figure shows."""
    gap = len(SEPARATOR)
    shown: list[str] = []
    used = -gap
    for index, part in enumerate(parts):
        later = sum(gap + len(p.short) for p in parts[index + 1 :] if p.essential)
        for option in (part.text, part.short):
            reserve = later if option is part.text else 0
            if used + gap + len(option) + reserve <= width:
                shown.append(option)
                used += gap + len(option)
                break
    if not shown and parts and width > 1:
        return parts[0].short[: width - 1] + "…"
    return SEPARATOR.join(shown)


def status_text(status: Status, width: int) -> str:
    return fit(fields(status), width)


def full_text(status: Status) -> str:
    """Every figure, whole (for the log)."""
    return SEPARATOR.join(field.text for field in fields(status))
