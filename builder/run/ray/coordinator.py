"""Cluster-wide limits and budget: one Ray actor owns them, workers ask it over actor calls.

The coordinator wraps the local classes unchanged (`EndpointLimits`, `Budget`), so every
worker of a run shares one in-flight bound, one RPM/TPM bucket per endpoint and one budget.
Workers hold proxies (`RemoteLimits`, `RemoteBudget`) with the same methods `LLMClient` calls.

A slot is a lease: a worker killed mid-request never releases it, so leases older than
`lease_s` (longer than any live request: the request timeout plus a margin) are reclaimed.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.errors import BudgetExceededError
from builder.llm.budget import Budget, Reservation, ledger_path
from builder.llm.limits import EndpointLimits
from builder.llm.protocol import Usage

REAP_EVERY_S = 1.0


@dataclass(frozen=True)
class LimitSettings:
    """What each endpoint's `EndpointLimits` is built from (the `limits` config section)."""

    concurrency: int
    rpm: float | None
    tpm: float | None
    max_usd: float | None
    max_tokens: int | None
    lease_s: float
    out_dir: str | None = None  # where the budget ledger lives (OUT/_state/budget.json)
    block: int = 1  # slots a worker may lease in one call (`builder.run.ray.leases`)
    share: int = 0  # slots a worker keeps for its own next requests (0: none)

    @property
    def leased(self) -> bool:
        """Whether workers may lease blocks of slots: only with no rates and no budget, where
        a slot is the only thing a request draws, so it can change hands without a call."""
        unlimited = (self.rpm, self.tpm, self.max_usd, self.max_tokens) == (None,) * 4
        return unlimited and self.block > 1


@dataclass
class _Lease:
    key: str
    estimate: int
    expires: float
    requests: int = 1


class Coordinator:
    """The state behind the actor: limits per endpoint key, the budget, the leases.

    Plain asyncio code, so it is unit-testable without Ray; `CoordinatorActor` hosts it.
    """

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings
        self.limits: dict[str, EndpointLimits] = {}
        path = ledger_path(Path(settings.out_dir)) if settings.out_dir else None
        self.budget = Budget(max_usd=settings.max_usd, max_tokens=settings.max_tokens, path=path)
        self.leases: dict[int, _Lease] = {}
        self.reclaimed = 0
        self.peak_in_flight = 0
        self._ids = itertools.count(1)
        self._reaper: asyncio.Task[None] | None = None

    def _limits(self, key: str) -> EndpointLimits:
        if key not in self.limits:
            s = self.settings
            self.limits[key] = EndpointLimits(max_in_flight=s.concurrency, rpm=s.rpm, tpm=s.tpm)
        return self.limits[key]

    def _budget_error(self) -> str | None:
        """Why no new request may start (spent + reserved at a limit), or None."""
        try:
            self.budget.settle(self.budget.reserve(0.0, 0), None, 0.0)
        except BudgetExceededError as exc:
            return str(exc)
        return None

    async def acquire(
        self, key: str, estimate: int, priority: int = 0, requests: int = 1
    ) -> tuple[int | None, str | None]:
        """(lease id, None) once a slot and the rate limits allow; (None, message) when the
        budget is spent, checked before waiting and again once the slot is held, before the
        rate limits are drawn from (as `EndpointLimits.acquire`'s `admit`)."""
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())
        spent = self._budget_error()
        if spent is not None:
            return None, spent
        limits = self._limits(key)
        try:
            await limits.acquire(estimate, priority, requests, admit=self._admit)
        except BudgetExceededError as exc:
            return None, str(exc)
        return self._grant(key, estimate, requests), None

    def _grant(self, key: str, estimate: int, requests: int = 1) -> int:
        """Record a slot just taken from `key`'s limits as a lease; its id."""
        lease = next(self._ids)
        expires = time.monotonic() + self.settings.lease_s
        self.leases[lease] = _Lease(key, estimate, expires, requests)
        self.peak_in_flight = max(self.peak_in_flight, self.limits[key].in_flight)
        return lease

    async def acquire_block(self, key: str, estimate: int, want: int) -> list[int]:
        """Leases for up to `want` requests: the first waited for, the rest only if free now
        (`LimitSettings.leased` limits: no rates, no budget, so nothing else to check)."""
        first, _ = await self.acquire(key, estimate)
        assert first is not None  # no budget: never refused
        granted = [first]
        limits = self._limits(key)
        while len(granted) < want and limits.try_acquire():
            granted.append(self._grant(key, estimate))
        return granted

    def release_many(self, leases: list[tuple[int, int | None]]) -> None:
        """`release` of several leases in one call (a worker's batched returns)."""
        for lease, actual_tokens in leases:
            self.release(lease, actual_tokens)

    def settle_many(self, settled: list[tuple[Usage | None, float]]) -> None:
        """What several replies cost, unreserved (leased limits have no budget to reserve)."""
        for usage, cost_usd in settled:
            self.budget.settle(Reservation(0.0, 0), usage, cost_usd)

    def _admit(self) -> None:
        spent = self._budget_error()
        if spent is not None:
            raise BudgetExceededError(spent)

    def add_requests(self, key: str, extra: int) -> None:
        """Calls a worker sent beyond those it acquired (`EndpointLimits.add_requests`)."""
        self._limits(key).add_requests(extra)

    def release(self, lease: int, actual_tokens: int | None, unsent: bool = False) -> None:
        """Free a lease's slot (an unknown lease was already reclaimed: nothing to do);
        `unsent`: its request never went out, so its rate-limit draws are given back."""
        held = self.leases.pop(lease, None)
        if held is None:
            return
        limits = self.limits[held.key]
        if unsent:
            limits.release_unsent(held.estimate, held.requests)
        else:
            limits.release(held.estimate, actual_tokens)

    def reserve(self, usd: float, tokens: int) -> None:
        """A worker's reservation for a request it holds a slot for. One that takes the
        ledger past a limit is recorded all the same (the request is on its way) and stops
        every later acquire."""
        try:
            self.budget.reserve(usd, tokens)
        except BudgetExceededError:
            self.budget.reserved_usd += usd
            self.budget.reserved_tokens += tokens

    def settle(self, usd: float, tokens: int, usage: Usage | None, cost_usd: float) -> None:
        self.budget.settle(Reservation(usd, tokens), usage, cost_usd)

    def reap(self, now: float | None = None) -> int:
        """Reclaim expired leases (their worker died); returns how many."""
        now = time.monotonic() if now is None else now
        expired = [lease for lease, held in self.leases.items() if held.expires <= now]
        for lease in expired:
            self.release(lease, None)
        self.reclaimed += len(expired)
        return len(expired)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(REAP_EVERY_S)
            self.reap()

    def stats(self) -> dict[str, Any]:
        self.budget.save()
        return {
            "spent_usd": self.budget.spent_usd,
            "spent_tokens": self.budget.spent_tokens,
            "in_flight": sum(lim.in_flight for lim in self.limits.values()),
            "peak_in_flight": self.peak_in_flight,
            "reclaimed_leases": self.reclaimed,
        }


class RemoteLimits:
    """`EndpointLimits` as seen by a worker: acquire/release go to the coordinator actor.

    Holds the leases of its own requests; `release` is fire-and-forget (the coordinator
    serves it in arrival order), `acquire` waits for the grant.
    """

    def __init__(self, actor: Any, key: str, budget: RemoteBudget) -> None:
        self.actor = actor
        self.key = key
        self.budget = budget
        self.in_flight = 0
        self.backing_off = 0  # this worker's requests waiting to retry (as EndpointLimits)
        self.last_error: str | None = None
        self._leases: dict[int, list[int]] = {}  # estimate -> leases (LIFO per estimate)

    async def acquire(
        self,
        estimated_tokens: int,
        priority: int = 0,
        requests: int = 1,
        admit: Callable[[], None] | None = None,
    ) -> None:
        """The coordinator grants slot and rates in one call (its own budget check comes
        before the rates), so this worker's `admit` runs after the grant; a refusal there
        hands the lease back as unsent, and the rates get their draws back."""
        lease, spent = await self.actor.acquire.remote(
            self.key, estimated_tokens, priority, requests
        )
        if spent is not None:
            self.budget.exhausted = spent
            raise BudgetExceededError(spent)
        self._leases.setdefault(estimated_tokens, []).append(lease)
        self.in_flight += 1
        if admit is not None:
            try:
                admit()
            except BaseException:
                self.actor.release.remote(self._drop(estimated_tokens), None, True)
                raise

    def add_requests(self, extra: int) -> None:
        if extra > 0:
            self.actor.add_requests.remote(self.key, extra)

    def release(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        self.actor.release.remote(self._drop(estimated_tokens), actual_tokens)

    def _drop(self, estimated_tokens: int) -> int:
        """Forget one of this worker's leases for that estimate; returns its id."""
        self.in_flight -= 1
        return self._leases[estimated_tokens].pop()


class RemoteBudget:
    """`Budget` as seen by a worker's gates: reservations and settlements go to the
    coordinator (fire-and-forget, in order), which owns the one ledger of the output folder.

    Exactness: the coordinator refuses a slot once spent + reserved reaches a limit, and a
    reservation reaches it at most one actor call after the slot was granted, so the limit can
    be passed by at most the requests granted in between (at most limits.concurrency, each at
    its worst case); locally it is passed only by what requests cost above their reservation.
    """

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.exhausted: str | None = None
        self.max_usd: float | None = None  # LLMClient checked pricing on the real Budget

    def reserve(self, usd: float, tokens: int) -> Reservation:
        if self.exhausted is not None:
            raise BudgetExceededError(self.exhausted)
        self.actor.reserve.remote(usd, tokens)
        return Reservation(usd, tokens)

    def settle(self, reservation: Reservation, usage: Usage | None, cost_usd: float) -> None:
        self.actor.settle.remote(reservation.usd, reservation.tokens, usage, cost_usd)

    def save(self) -> None:
        """The coordinator writes the ledger; nothing to do here."""
