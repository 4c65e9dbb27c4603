"""The coordinator's state without Ray: leases, reclaiming a dead worker's slots, the budget."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from builder.errors import BudgetExceededError
from builder.llm.limits import RateLimiter
from builder.llm.protocol import Usage
from builder.run.ray.coordinator import Coordinator, LimitSettings, RemoteBudget, RemoteLimits


def settings(**changes: object) -> LimitSettings:
    base = {"concurrency": 2, "rpm": None, "tpm": None, "max_usd": None, "max_tokens": None}
    return LimitSettings(**{**base, "lease_s": 30.0, **changes})  # type: ignore[arg-type]


def test_a_dead_workers_leases_are_reclaimed_after_lease_s() -> None:
    async def scenario() -> None:
        state = Coordinator(settings())
        first, _ = await state.acquire("ep", 10)
        second, _ = await state.acquire("ep", 10)
        assert first is not None and second is not None and first != second
        waiter = asyncio.ensure_future(state.acquire("ep", 10))
        await asyncio.sleep(0.01)
        assert not waiter.done()  # both slots held by a worker that will never release
        assert state.reap(now=0.0) == 0  # not expired yet
        held = state.leases[first].expires
        assert state.reap(now=held + 1) == 2
        lease, spent = await asyncio.wait_for(waiter, 1)
        assert lease is not None and spent is None
        state.release(first, None)  # a late release of a reclaimed lease changes nothing
        assert state.limits["ep"].in_flight == 1

    asyncio.run(scenario())


def test_the_budget_refuses_new_slots_once_spent_cluster_wide() -> None:
    async def scenario() -> None:
        state = Coordinator(settings(max_tokens=100))
        lease, spent = await state.acquire("ep", 10)
        assert spent is None and lease is not None
        state.reserve(0.0, 10)  # a worker's reservation, then its settlement
        state.settle(0.0, 10, Usage(80, 30), 0.0)
        state.release(lease, 110)
        lease, spent = await state.acquire("other-endpoint", 10)
        assert lease is None and spent is not None and "budget_tokens=100" in spent
        assert state.stats()["spent_tokens"] == 110

    asyncio.run(scenario())


class _Draws:
    """What the coordinator's rate limiters are asked for: draws (acquire) and corrections
    (adjust, negative when given back)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.acquired: list[float] = []
        self.adjusted: list[float] = []
        real_acquire, real_adjust = RateLimiter.acquire, RateLimiter.adjust

        async def acquire(limiter: RateLimiter, amount: float = 1.0) -> None:
            self.acquired.append(amount)
            await real_acquire(limiter, amount)

        def adjust(limiter: RateLimiter, amount: float) -> None:
            self.adjusted.append(amount)
            real_adjust(limiter, amount)

        monkeypatch.setattr(RateLimiter, "acquire", acquire)
        monkeypatch.setattr(RateLimiter, "adjust", adjust)


def test_a_request_refused_once_its_slot_is_free_draws_nothing_from_the_rates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The budget runs out while a request waits for its slot: the coordinator refuses it
    when the slot comes, before the RPM/TPM draws, so the limiters count only sent requests."""
    draws = _Draws(monkeypatch)

    async def scenario() -> None:
        state = Coordinator(settings(concurrency=1, rpm=60_000, tpm=10**6, max_tokens=100))
        first, _ = await state.acquire("ep", 10)
        waiter = asyncio.ensure_future(state.acquire("ep", 10, 0, 3))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        state.reserve(0.0, 10)
        state.settle(0.0, 10, Usage(80, 30), 0.0)  # the budget is spent now
        assert first is not None
        state.release(first, 110)
        lease, spent = await asyncio.wait_for(waiter, 1)
        assert lease is None and spent is not None and "budget_tokens=100" in spent
        assert state.limits["ep"].in_flight == 0 and not state.leases

    asyncio.run(scenario())
    assert draws.acquired == [1, 10]  # the first request's call and tokens, nothing more


class _LocalActor:
    """The coordinator behind Ray's call shape (`actor.method.remote(...)`), without Ray:
    coroutines are returned to be awaited, other calls run at once (fire-and-forget)."""

    def __init__(self, state: Coordinator) -> None:
        self.state = state

    def __getattr__(self, name: str) -> SimpleNamespace:
        return SimpleNamespace(remote=getattr(self.state, name))


def test_a_grant_the_worker_refuses_gives_its_rate_draws_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that learnt the budget is spent refuses a slot the coordinator granted
    meanwhile: the lease goes back as unsent, with its request and token draws."""
    draws = _Draws(monkeypatch)

    async def scenario() -> None:
        state = Coordinator(settings(rpm=60_000, tpm=10**6))
        actor = _LocalActor(state)
        budget = RemoteBudget(actor)
        limits = RemoteLimits(actor, "ep", budget)
        budget.exhausted = "budget_usd=1 reached (spent 1.0)"  # an earlier refusal's message

        def admit() -> None:
            budget.reserve(0.01, 25)  # what the worker's gate does once its slot is held

        with pytest.raises(BudgetExceededError, match="budget_usd=1"):
            await limits.acquire(25, 0, 2, admit=admit)
        assert limits.in_flight == 0 and state.limits["ep"].in_flight == 0
        assert not state.leases

    asyncio.run(scenario())
    assert draws.acquired == [2, 25]  # two HTTP calls' worth, 25 tokens: drawn at the grant
    assert draws.adjusted == [-2, -25]  # and given back when the worker refused it
