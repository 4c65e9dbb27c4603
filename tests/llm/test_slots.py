"""Priority slots: the bound holds, lower priorities go first, cancelled waiters lose nothing."""

from __future__ import annotations

import asyncio

import pytest

from builder.llm.slots import PrioritySlots


def test_waiters_are_served_by_priority_then_in_arrival_order() -> None:
    async def scenario() -> list[str]:
        slots = PrioritySlots(1)
        served: list[str] = []
        await slots.acquire()  # the only slot is taken

        async def ask(name: str, priority: int) -> None:
            await slots.acquire(priority)
            served.append(name)
            slots.release()

        tasks = [
            asyncio.create_task(ask(name, priority))
            for name, priority in [("judge-1", 1), ("first-1", 0), ("judge-2", 1), ("first-2", 0)]
        ]
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(*tasks)
        return served

    assert asyncio.run(scenario()) == ["first-1", "first-2", "judge-1", "judge-2"]


def test_in_use_never_exceeds_the_limit_and_cancelled_waiters_give_their_slot_back() -> None:
    async def scenario() -> tuple[int, int]:
        slots = PrioritySlots(3)
        in_use = peak = 0

        async def work(k: int) -> None:
            nonlocal in_use, peak
            await slots.acquire(k % 2)
            in_use += 1
            peak = max(peak, in_use)
            try:
                await asyncio.sleep(0.001 * (k % 3))
            finally:
                in_use -= 1
                slots.release()

        tasks = [asyncio.create_task(work(k)) for k in range(40)]
        await asyncio.sleep(0)
        for task in tasks[5:15]:
            task.cancel()  # some while waiting, some while holding a slot
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert sum(isinstance(r, asyncio.CancelledError) for r in results) == 10
        return peak, slots.free

    peak, free = asyncio.run(scenario())
    assert peak == 3
    assert free == 3  # every slot came back


def test_a_waiter_cancelled_after_it_was_handed_a_slot_releases_it() -> None:
    async def scenario() -> int:
        slots = PrioritySlots(1)
        await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)
        slots.release()  # handed to the waiter...
        waiter.cancel()  # ...which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return slots.free

    assert asyncio.run(scenario()) == 1
