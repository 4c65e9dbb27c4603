"""gather_settled: the others finish before a failure is raised; cancelling cancels all."""

from __future__ import annotations

import asyncio

import pytest

from builder.llm.settled import gather_settled


async def value(v: int, delay: float, done: list[int]) -> int:
    await asyncio.sleep(delay)
    done.append(v)
    return v


async def fail(delay: float, message: str) -> int:
    await asyncio.sleep(delay)
    raise ValueError(message)


def test_results_in_order() -> None:
    done: list[int] = []
    got = asyncio.run(gather_settled(value(1, 0.02, done), value(2, 0.0, done)))
    assert got == (1, 2) and done == [2, 1]


def test_a_failure_waits_for_the_others_then_raises_the_first() -> None:
    done: list[int] = []

    async def main() -> None:
        await gather_settled(
            value(1, 0.05, done), fail(0.0, "first"), fail(0.01, "second"), value(2, 0.03, done)
        )

    with pytest.raises(ValueError, match="first"):
        asyncio.run(main())
    assert sorted(done) == [1, 2]  # plain gather would have raised with both still running


def test_cancelling_the_caller_cancels_every_awaitable() -> None:
    done: list[int] = []

    async def main() -> None:
        outer = asyncio.ensure_future(
            gather_settled(value(1, 0.2, done), fail(0.0, "x"), value(2, 0.2, done))
        )
        await asyncio.sleep(0.05)  # the failure happened; gather_settled waits for the rest
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        await asyncio.sleep(0.3)

    asyncio.run(main())
    assert done == []
