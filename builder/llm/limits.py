"""Politeness towards one endpoint: in-flight bound, request and token rate limits, retry policy.

Clocks and sleeps are injectable so that spacing and backoff can be tested logically, without
wall-clock assertions.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from builder.llm.slots import PrioritySlots

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class Hold:
    """Why requests wait at an endpoint right now, for the progress line: a rate limit
    (`kind`: requests- or tokens-per-minute) with the next request's need, what the bucket
    holds, and when it will hold enough."""

    kind: str
    per_minute: float
    need: float
    available: float
    seconds: float


class RateLimiter:
    """Token bucket refilled at `per_minute / 60` per second, holding at most `burst`.

    `acquire(amount)` waits until the bucket holds `min(amount, burst)`, then takes `amount`
    (the level may go negative, so a request larger than the burst still goes, and the debt
    delays the next ones: the long-run rate is exact). Waiters are served in arrival order;
    `hold()` says what the first of them waits for.
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst: float | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        kind: str = "rate",
    ) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.kind = kind
        self.per_minute = per_minute
        self._waiting_for: float | None = None  # what the request at the head of the line needs
        self.rate = per_minute / 60.0
        self.burst = burst if burst is not None else max(1.0, self.rate)
        self._clock = clock
        self._sleep = sleep
        self._level = self.burst
        self._stamp = clock()
        self._lock: asyncio.Lock | None = None

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.burst, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            need = min(amount, self.burst)
            self._refill()
            try:
                while self._level < need:
                    self._waiting_for = need
                    await self._sleep((need - self._level) / self.rate)
                    self._refill()
            finally:
                self._waiting_for = None
            self._level -= amount

    def hold(self) -> Hold | None:
        """What the request at the head of the line waits for, or None when none waits."""
        need = self._waiting_for
        if need is None:
            return None
        self._refill()
        seconds = max(0.0, (need - self._level) / self.rate)
        return Hold(self.kind, self.per_minute, need, max(0.0, self._level), seconds)

    def adjust(self, amount: float) -> None:
        """Correct an estimate after the fact: positive takes more, negative gives back."""
        self._refill()
        self._level = min(self.burst, self._level - amount)


@dataclass
class EndpointLimits:
    """Runtime limits of one endpoint. Share one instance between clients of the same endpoint.

    `max_in_flight` bounds concurrent requests; `rpm` / `tpm` are requests and tokens per
    minute (None: unlimited). Tokens are estimated before a request and corrected after.
    """

    max_in_flight: int = 16
    rpm: float | None = None
    tpm: float | None = None
    clock: Clock = time.monotonic
    sleep: Sleep = asyncio.sleep
    in_flight: int = field(default=0, init=False)
    peak_in_flight: int = field(default=0, init=False)
    backing_off: int = field(default=0, init=False)  # requests waiting to retry after an error
    last_error: str | None = field(default=None, init=False)  # the kind of the latest of those

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self._slots = PrioritySlots(self.max_in_flight)
        self.requests = self._limiter(self.rpm, None, "requests-per-minute")
        # a minute's worth of tokens may burst, as providers measure TPM over a minute
        self.tokens = self._limiter(self.tpm, self.tpm, "tokens-per-minute")

    def _limiter(
        self, per_minute: float | None, burst: float | None, kind: str
    ) -> RateLimiter | None:
        if per_minute is None:
            return None
        return RateLimiter(per_minute, burst=burst, clock=self.clock, sleep=self.sleep, kind=kind)

    def hold(self) -> Hold | None:
        """The rate limit holding this endpoint's next request back, if any."""
        for limiter in (self.requests, self.tokens):
            held = limiter.hold() if limiter is not None else None
            if held is not None:
                return held
        return None

    @property
    def queued(self) -> int:
        """Requests waiting for a concurrency slot."""
        return self._slots.waiting

    async def acquire(
        self,
        estimated_tokens: int,
        priority: int = 0,
        requests: int = 1,
        admit: Callable[[], None] | None = None,
    ) -> None:
        """Wait for a slot (lower `priority` first), then for the request and token budgets
        of the rate limits (`requests`: HTTP requests the holder sends one after another).
        `admit` runs once the slot is held, before anything is drawn from the rate limits
        (the budget's reservation): when it refuses, the slot is freed and the limits count
        no request the server never saw."""
        await self._slots.acquire(priority)
        try:
            if admit is not None:
                admit()
            if self.requests is not None:
                await self.requests.acquire(requests)
            if self.tokens is not None:
                await self.tokens.acquire(estimated_tokens)
        except BaseException:
            self._slots.release()
            raise
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def try_acquire(self) -> bool:
        """A slot now, without waiting, for a limit with no rates (with rates, False: each
        request must be drawn from them in `acquire`)."""
        if self.requests is not None or self.tokens is not None or not self._slots.try_acquire():
            return False
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return True

    def add_requests(self, extra: int) -> None:
        """HTTP requests that went out beyond those acquired (a provider's own retry): drawn
        from the request-rate limiter after the fact, as a debt the next requests wait for."""
        if self.requests is not None and extra > 0:
            self.requests.adjust(extra)

    def release_unsent(self, estimated_tokens: int, requests: int = 1) -> bool:
        """Free the slot of a request granted and never sent (a budget refused it after the
        grant: the Ray coordinator grants slot and rates in one call), giving its draws back
        to the rate limits, so that they count only what the server saw."""
        if self.requests is not None:
            self.requests.adjust(-requests)
        if self.tokens is not None:
            self.tokens.adjust(-estimated_tokens)
        return self.release(estimated_tokens, None)

    def release(self, estimated_tokens: int, actual_tokens: int | None) -> bool:
        """Free the slot and correct the token estimate with what the server reported; True
        when a waiting request was handed the slot."""
        self.in_flight -= 1
        handed = self._slots.release()
        if self.tokens is not None and actual_tokens is not None:
            self.tokens.adjust(actual_tokens - estimated_tokens)
        return handed


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter. A server's `Retry-After` between 0 and
    `max_retry_after_s` (both excluded: 0 is no hint, a longer one is not waited for) is
    honoured and stretched by up to `jitter` of itself, so that the requests a 429 turned back
    do not all return in the same instant; otherwise the backoff applies, as the OpenAI and
    Anthropic SDKs do (`_calculate_retry_timeout` in openai/_base_client.py: a Retry-After
    outside (0, 60] falls back to their own exponential backoff)."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 60.0
    max_retry_after_s: float = 60.0
    jitter: float = 0.5  # fraction of the delay drawn at random (0: none, 1: full jitter)
    sleep: Sleep = asyncio.sleep
    random: Callable[[], float] = random.random

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None and 0.0 < retry_after <= self.max_retry_after_s:
            return retry_after * (1.0 + self.jitter * self.random())
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return backoff * (1.0 - self.jitter * self.random())
