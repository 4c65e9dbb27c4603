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
from dataclasses import dataclass
from typing import Any

from builder.errors import BudgetExceededError
from builder.llm.limits import EndpointLimits
from builder.llm.protocol import Usage
from builder.llm.usage import Budget

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


@dataclass
class _Lease:
    key: str
    estimate: int
    expires: float


class Coordinator:
    """The state behind the actor: limits per endpoint key, the budget, the leases.

    Plain asyncio code, so it is unit-testable without Ray; `CoordinatorActor` hosts it.
    """

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings
        self.limits: dict[str, EndpointLimits] = {}
        self.budget = Budget(max_usd=settings.max_usd, max_tokens=settings.max_tokens)
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
        try:
            self.budget.check()
        except BudgetExceededError as exc:
            return str(exc)
        return None

    async def acquire(self, key: str, estimate: int) -> tuple[int | None, str | None]:
        """(lease id, None) once a slot and the rate limits allow; (None, message) when the
        budget is spent, checked before waiting and again once the slot is granted."""
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())
        spent = self._budget_error()
        if spent is not None:
            return None, spent
        limits = self._limits(key)
        await limits.acquire(estimate)
        spent = self._budget_error()
        if spent is not None:
            limits.release(estimate, None)
            return None, spent
        lease = next(self._ids)
        self.leases[lease] = _Lease(key, estimate, time.monotonic() + self.settings.lease_s)
        self.peak_in_flight = max(self.peak_in_flight, limits.in_flight)
        return lease, None

    def release(self, lease: int, actual_tokens: int | None) -> None:
        """Free a lease's slot (an unknown lease was already reclaimed: nothing to do)."""
        held = self.leases.pop(lease, None)
        if held is not None:
            self.limits[held.key].release(held.estimate, actual_tokens)

    def spend(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.budget.spend(Usage(prompt_tokens, completion_tokens), cost_usd)

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
        self._leases: dict[int, list[int]] = {}  # estimate -> leases (LIFO per estimate)

    async def acquire(self, estimated_tokens: int) -> None:
        lease, spent = await self.actor.acquire.remote(self.key, estimated_tokens)
        if spent is not None:
            self.budget.exhausted = spent
            raise BudgetExceededError(spent)
        self._leases.setdefault(estimated_tokens, []).append(lease)
        self.in_flight += 1

    def release(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        lease = self._leases[estimated_tokens].pop()
        self.in_flight -= 1
        self.actor.release.remote(lease, actual_tokens)


class RemoteBudget:
    """`Budget` as seen by a worker: spending is reported to the coordinator, and `check`
    raises once any acquire learned that the cluster-wide budget is spent (the coordinator
    itself refuses every new slot from then on)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.exhausted: str | None = None
        self.max_usd: float | None = None  # LLMClient reads it; pricing is checked locally

    def spend(self, usage: Usage, cost_usd: float) -> None:
        self.actor.spend.remote(usage.prompt_tokens, usage.completion_tokens, cost_usd)

    def check(self) -> None:
        if self.exhausted is not None:
            raise BudgetExceededError(self.exhausted)
