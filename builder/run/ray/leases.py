"""Slots leased in blocks: the coordinator round trip off the per-request path.

With no rates and no budget (`LimitSettings.leased`), a request draws nothing but a slot, so a
worker can lease several in one call (`Coordinator.acquire_block`), hand a freed slot straight
to its own next request while it holds no more than its share, and give the rest back in
batches (`release_many`). Costs are settled in batches too, awaited at the end of each shard
so the coordinator's ledger is whole when the driver reads it. The in-flight bound stays
exact: a slot is counted at the coordinator from its grant until it is given back.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from builder.llm.budget import Reservation
from builder.llm.protocol import Usage

FLUSH_AFTER_S = 0.002  # returns that arrive together (a wave of replies) go in one call


class LeasedLimits:
    """`EndpointLimits` as seen by a worker whose slots come in blocks from the coordinator."""

    def __init__(self, actor: Any, key: str, block: int, share: int) -> None:
        self.actor = actor
        self.key = key
        self.block = block
        self.share = share
        self.backing_off = 0  # this worker's requests waiting to retry (as EndpointLimits)
        self.last_error: str | None = None
        self.spare: list[int] = []  # leases granted and not in use
        # leases in use: any one frees a slot (no rates here, so no estimate to correct)
        self._in_use: list[int] = []
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._asking = False
        self._returns: list[tuple[int, int | None]] = []
        self._flush: asyncio.TimerHandle | None = None
        self._fetcher: asyncio.Task[None] | None = None

    async def acquire(
        self,
        estimated_tokens: int,
        priority: int = 0,
        requests: int = 1,
        admit: Callable[[], None] | None = None,
    ) -> None:
        lease = self.spare.pop() if self.spare else await self._wait(estimated_tokens)
        self._in_use.append(lease)
        if admit is not None:
            try:
                admit()
            except BaseException:
                self.release(estimated_tokens, None)
                raise

    async def _wait(self, estimate: int) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        if not self._asking:
            self._asking = True
            # held here: the loop keeps only a weak reference to a task
            self._fetcher = asyncio.get_running_loop().create_task(self._fetch(estimate))
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed a lease, then cancelled
                self._give_back(future.result(), None)
            raise

    @property
    def in_flight(self) -> int:
        return len(self._in_use)

    def _live_waiters(self) -> int:
        return sum(1 for future in self._waiters if not future.done())

    async def _fetch(self, estimate: int) -> None:
        """Lease blocks while anyone here waits: as many as wait, at most `block` a call."""
        try:
            while self._live_waiters():
                want = min(self.block, self._live_waiters())
                for lease in await self.actor.acquire_block.remote(self.key, estimate, want):
                    self._hand(lease)
        except BaseException as exc:  # the coordinator is gone: every waiter learns it
            while self._waiters:
                future = self._waiters.popleft()
                if not future.done():
                    future.set_exception(exc)
        finally:
            self._asking = False

    def _hand(self, lease: int) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(lease)
                return
        self.spare.append(lease)
        self._flush_soon()  # nobody here wants it: back to the coordinator

    def add_requests(self, extra: int) -> None:
        """Nothing to count: leased limits have no request rate."""

    def release(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        lease = self._in_use.pop()
        if self._live_waiters() and self.in_flight < self.share:
            self._hand(lease)  # kept for this worker's next request: no call
            return
        self._give_back(lease, actual_tokens)

    def _give_back(self, lease: int, actual_tokens: int | None) -> None:
        self._returns.append((lease, actual_tokens))
        if len(self._returns) >= self.block:
            self.flush()
        else:
            self._flush_soon()

    def _flush_soon(self) -> None:
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self.flush)

    def flush(self) -> None:
        """Give back the slots freed since the last call, and any spare lease (fire-and-forget:
        a caller's calls reach the coordinator in order)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if not self._live_waiters():
            self._returns.extend((lease, None) for lease in self.spare)
            self.spare.clear()
        if self._returns:
            self.actor.release_many.remote(self._returns)
            self._returns = []


class LeasedBudget:
    """`Budget` as seen by a worker with leased limits: nothing to reserve against (no
    limit), and costs settled at the coordinator in batches."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.max_usd: float | None = None
        self.exhausted: str | None = None
        self._settled: list[tuple[Usage | None, float]] = []

    def reserve(self, usd: float, tokens: int) -> Reservation:
        return Reservation(0.0, 0)

    def settle(self, reservation: Reservation, usage: Usage | None, cost_usd: float) -> None:
        self._settled.append((usage, cost_usd))

    async def flush(self) -> None:
        """Send what was settled since the last flush and wait until the coordinator has it."""
        settled, self._settled = self._settled, []
        if settled:
            await self.actor.settle_many.remote(settled)

    def save(self) -> None:
        """The coordinator writes the ledger; nothing to do here."""
