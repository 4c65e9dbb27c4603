"""`gather_settled`: asyncio.gather that lets the other awaitables finish when one fails.

With plain `gather`, the first exception returns at once and the other tasks run on,
orphaned: when the loop closes they are cancelled mid-request. A request the server already
received is paid for, so cancelling it loses its usage from the budget ledger (the run
stopped by `limits.budget_usd` then under-counts what it spent). Here they run to their
end, settle, and only then is the first error raised; once the budget has refused one
request, their next requests are refused at once too, so the wait is one round of requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar, overload

A = TypeVar("A")
B = TypeVar("B")
T = TypeVar("T")


@overload
async def gather_settled(a: Awaitable[A], b: Awaitable[B], /) -> tuple[A, B]: ...


@overload
async def gather_settled(*aws: Awaitable[T]) -> tuple[T, ...]: ...


async def gather_settled(*aws: Awaitable[Any]) -> tuple[Any, ...]:
    """The results in order, as `asyncio.gather`; on an error, the first one, raised after
    every other awaitable has finished. Cancelling the caller cancels them all."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return tuple(await asyncio.gather(*tasks))
    except asyncio.CancelledError:
        raise  # gather has cancelled the tasks
    except Exception:
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
        for task in tasks:  # later errors are the first one's consequences: retrieved, dropped
            if not task.cancelled():
                task.exception()
        raise
