"""The coordinator's state without Ray: leases, reclaiming a dead worker's slots, the budget."""

from __future__ import annotations

import asyncio

from builder.distributed.coordinator import Coordinator, LimitSettings
from builder.llm.protocol import Usage


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
