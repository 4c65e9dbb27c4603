"""Concurrency slots handed out by priority, then in arrival order.

Why not a plain semaphore: a step is a chain of requests (references and candidates, then
judging waves, then the control), and the run ends when the last chain ends. Serving the
requests of chains with the most left to do first (critical-path order) keeps the slots full
to the end, where first-come order left the last steps' first requests queued behind every
other step's judging (benchmarks/bench_run.py: in-flight per tenth of the run).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class PrioritySlots:
    """`limit` slots; `acquire(priority)` waits for one (lower priority values go first)."""

    def __init__(self, limit: int) -> None:
        self.free = limit
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int = 0) -> None:
        if self.free > 0:  # free only when `release` found no live waiter to hand it to
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed a slot, then cancelled
                self.release()
            raise

    def try_acquire(self) -> bool:
        """A slot now if one is free (none is while anyone waits), without waiting."""
        if self.free > 0:
            self.free -= 1
            return True
        return False

    @property
    def waiting(self) -> int:
        return sum(1 for *_, future in self._waiters if not future.done())

    def release(self) -> bool:
        """Hand the slot to the first live waiter (True), or free it (False)."""
        while self._waiters:
            *_, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
                return True
        self.free += 1
        return False
