"""Slots leased in blocks (`builder.run.ray.leases`), without Ray: two workers' proxies over
one `Coordinator` through an in-process stand-in for actor calls."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

from builder.config import validate_config
from builder.llm.protocol import Usage
from builder.run.ray.coordinator import Coordinator, LimitSettings
from builder.run.ray.engine import limit_settings
from builder.run.ray.leases import LeasedBudget, LeasedLimits


class _Method:
    def __init__(self, fn: Any, calls: Counter[str], name: str) -> None:
        self.fn, self.calls, self.name = fn, calls, name

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        """As an actor call: returns at once, the result arrives later."""
        self.calls[self.name] += 1
        result = self.fn(*args)
        if asyncio.iscoroutine(result):
            return asyncio.ensure_future(result)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(result)
        return done


class LocalActor:
    """The coordinator's methods called as a worker calls the actor, counted by name."""

    def __init__(self, state: Coordinator) -> None:
        self.state = state
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> _Method:
        return _Method(getattr(self.state, name), self.calls, name)


def settings(concurrency: int, **changes: Any) -> LimitSettings:
    base: dict[str, Any] = {"rpm": None, "tpm": None, "max_usd": None, "max_tokens": None}
    return LimitSettings(concurrency=concurrency, lease_s=30.0, **{**base, **changes})


async def workload(limits: LeasedLimits, requests: int, seed: int, peak: list[int]) -> None:
    """`requests` requests from 40 concurrent callers, each holding its slot a little while."""
    rng = random.Random(seed)
    queue = iter(range(requests))
    state: Coordinator = limits.actor.state

    async def caller() -> None:
        for _ in queue:
            await limits.acquire(100)
            peak.append(state.limits["ep"].in_flight)
            await asyncio.sleep(rng.uniform(0.001, 0.004))
            limits.release(100, 90)

    await asyncio.gather(*(caller() for _ in range(40)))
    limits.flush()


@pytest.mark.parametrize(("share", "calls_per_request"), [(8, 1 / 4), (0, 1 / 2)])
def test_two_workers_never_hold_more_than_the_limit_and_call_once_per_block(
    share: int, calls_per_request: float
) -> None:
    """With a share, freed slots mostly stay with their worker; with none, every slot goes
    back and is leased again, several per call."""

    async def scenario() -> tuple[LocalActor, list[int]]:
        state = Coordinator(settings(16, block=8, share=share))
        actor = LocalActor(state)
        workers = [LeasedLimits(actor, "ep", block=8, share=share) for _ in range(2)]
        peak: list[int] = []
        await asyncio.gather(*(workload(w, 400, k, peak) for k, w in enumerate(workers)))
        await asyncio.sleep(0.01)  # the last batched returns
        assert state.limits["ep"].in_flight == 0 and not state.leases  # all given back
        return actor, peak

    actor, peak = asyncio.run(scenario())
    assert max(peak) == 16  # the limit is used whole, and never passed
    # 800 requests: the round trip is off the per-request path (one call per ~4+ requests)
    assert actor.calls["acquire_block"] <= 800 * calls_per_request
    assert actor.calls["release_many"] <= 800 * calls_per_request
    assert "acquire" not in actor.calls and "release" not in actor.calls


def test_a_worker_keeps_no_more_than_its_share_while_another_waits() -> None:
    async def scenario() -> int:
        state = Coordinator(settings(8, block=4, share=4))
        actor = LocalActor(state)
        busy = LeasedLimits(actor, "ep", block=4, share=4)
        other = LeasedLimits(actor, "ep", block=4, share=4)
        peak: list[int] = []
        hog = asyncio.ensure_future(workload(busy, 1500, 1, peak))
        await asyncio.sleep(0.02)  # the first worker holds all 8 slots by now
        started = asyncio.get_running_loop().time()
        await other.acquire(100)  # a fair limit hands it a slot within a few holds
        waited = asyncio.get_running_loop().time() - started
        other.release(100, None)
        other.flush()
        await hog
        return waited

    assert asyncio.run(scenario()) < 0.05  # the hog alone takes ~0.5 s


def test_a_cancelled_waiter_gives_its_lease_back() -> None:
    async def scenario() -> Coordinator:
        state = Coordinator(settings(1, block=2, share=1))
        actor = LocalActor(state)
        limits = LeasedLimits(actor, "ep", block=2, share=1)
        await limits.acquire(10)
        waiter = asyncio.ensure_future(limits.acquire(10))
        await asyncio.sleep(0.01)
        waiter.cancel()
        limits.release(10, None)
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limits.flush()
        await asyncio.sleep(0.01)
        return state

    state = asyncio.run(scenario())
    assert state.limits["ep"].in_flight == 0 and not state.leases


def test_leased_costs_reach_the_ledger_when_a_shard_ends() -> None:
    async def scenario() -> dict[str, Any]:
        state = Coordinator(settings(4, block=2, share=2))
        budget = LeasedBudget(LocalActor(state))
        for tokens in (10, 20, 30):
            budget.settle(budget.reserve(1.0, tokens), Usage(tokens, 1), 0.5)
        assert state.stats()["spent_tokens"] == 0  # batched: nothing sent yet
        await budget.flush()
        return state.stats()

    stats = asyncio.run(scenario())
    assert stats["spent_tokens"] == 63 and stats["spent_usd"] == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("limits", "leased", "block"),
    [
        ({"concurrency": 64}, True, 16),
        ({"concurrency": 8}, True, 2),
        ({"concurrency": 4}, False, 1),  # a share of 2: leasing saves nothing
        ({"concurrency": 64, "requests_per_minute": 600}, False, 16),  # each request drawn
        ({"concurrency": 64, "budget_tokens": 10_000}, False, 16),  # each request checked
    ],
)
def test_slots_are_leased_only_where_a_slot_is_all_a_request_draws(
    limits: dict[str, Any], leased: bool, block: int
) -> None:
    raw = {"inputs": [{"path": "x"}], "limits": limits, "execution": {"actors": 2}}
    cfg = validate_config(raw)
    got = limit_settings(cfg)
    assert (got.leased, got.block, got.share) == (leased, block, limits["concurrency"] // 2)
