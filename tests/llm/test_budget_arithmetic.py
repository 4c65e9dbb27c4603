"""The budget's worst-case arithmetic, pinned: a request reserves every sample it asks for,
and the token check counts what requests in flight have reserved."""

from __future__ import annotations

import asyncio

import pytest

from builder.errors import BudgetExceededError
from builder.llm.admission import Estimate, Gate
from builder.llm.budget import Budget
from builder.llm.limits import EndpointLimits
from builder.llm.protocol import Usage


def _gate(budget: Budget, per_sample: int = 100, prompt_worst: int = 50) -> Gate:
    return Gate(
        Estimate(prompt=40, prompt_worst=prompt_worst, per_sample=per_sample),
        EndpointLimits(max_in_flight=8),
        budget,
        worst_case_usd=lambda prompt, completion: prompt * 1e-6 + completion * 1e-5,
        cost_usd=lambda usage: 0.0,
        deadline_s=None,
    )


def test_a_request_for_n_samples_reserves_n_times_the_completion_bound() -> None:
    budget = Budget(max_usd=10.0, max_tokens=100_000)

    async def scenario() -> tuple[int, float]:
        async with _gate(budget).http(samples=8):
            return budget.reserved_tokens, budget.reserved_usd

    tokens, usd = asyncio.run(scenario())
    assert tokens == 50 + 8 * 100
    assert usd == pytest.approx(50e-6 + 800e-5)
    assert budget.reserved_tokens == 0  # settled on the way out


def test_a_limit_that_fits_one_sample_but_not_eight_refuses_the_eight_sample_request() -> None:
    budget = Budget(max_tokens=50 + 100 + 10)

    async def scenario() -> None:
        async with _gate(budget).http(samples=8):
            pass

    with pytest.raises(BudgetExceededError):
        asyncio.run(scenario())
    assert budget.spent_tokens == 0 and budget.refused == 1


def test_the_token_check_counts_reservations_still_in_flight() -> None:
    budget = Budget(max_tokens=1000)
    first = budget.reserve(0.0, 600)  # in flight, not settled
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.0, 600)  # 600 + 600 > 1000 although nothing is spent yet
    budget.settle(first, Usage(prompt_tokens=100, completion_tokens=50), 0.0)
    assert (budget.reserved_tokens, budget.spent_tokens) == (0, 150)


def test_concurrent_requests_never_reserve_past_the_token_limit() -> None:
    """Eight requests of 850 tokens at worst, a limit of 2,000: two go out, six are refused,
    and at no moment is more than the limit reserved."""
    budget = Budget(max_tokens=2000)
    peak = 0
    started = asyncio.Event()

    async def one() -> str:
        nonlocal peak
        try:
            async with _gate(budget).http(samples=8):
                peak = max(peak, budget.reserved_tokens)
                await started.wait()
                return "sent"
        except BudgetExceededError:
            return "refused"

    async def scenario() -> list[str]:
        tasks = [asyncio.create_task(one()) for _ in range(8)]
        await asyncio.sleep(0)
        for _ in range(10):
            await asyncio.sleep(0)
        started.set()
        return await asyncio.gather(*tasks)

    outcomes = asyncio.run(scenario())
    assert outcomes.count("sent") == 2 and outcomes.count("refused") == 6
    assert peak == 2 * 850 <= 2000
