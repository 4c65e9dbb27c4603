"""The budget ledger: reservations before sending, settlement from usage, persistence."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from builder.errors import BudgetExceededError, ConfigError
from builder.llm.budget import Budget
from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.llm.limits import EndpointLimits
from builder.llm.protocol import ChatRequest, Usage
from builder.llm.usage import ModelPrice, PriceTable
from schemas.trajectories import Message


def test_a_reservation_that_could_pass_the_limit_is_refused() -> None:
    budget = Budget(max_usd=1.0)
    first = budget.reserve(0.6, 0)
    with pytest.raises(BudgetExceededError, match=r"limits\.budget_usd"):
        budget.reserve(0.5, 0)  # 0.6 reserved + 0.5 > 1.0, though nothing is spent yet
    budget.settle(first, Usage(10, 10), 0.2)
    assert budget.spent_usd == pytest.approx(0.2) and budget.reserved_usd == 0.0


def test_the_ledger_persists_and_a_refusal_sticks_until_the_limit_is_raised(
    tmp_path: Path,
) -> None:
    path = tmp_path / "budget.json"
    budget = Budget(max_usd=1.0, path=path)
    budget.settle(budget.reserve(0.5, 0), Usage(1, 1), 0.45)
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.6, 0)
    budget.save()
    again = Budget(max_usd=1.0, path=path)
    assert again.spent_usd == pytest.approx(0.45)
    with pytest.raises(BudgetExceededError):
        again.reserve(0.01, 0)  # would fit, but the folder stopped at this limit
    raised = Budget(max_usd=2.0, path=path)
    raised.reserve(0.6, 0)


def test_an_unreadable_ledger_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "budget.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"budget\.json: unreadable budget ledger"):
        Budget(max_usd=1.0, path=path)


def test_the_client_reserves_the_worst_case_only_once_it_holds_a_slot() -> None:
    """64 requests queued for 2 slots: the budget sees at most 2 reservations at once, so the
    queue does not pass the check early (the old 3.3x overshoot)."""
    prices = PriceTable({"fake": ModelPrice(input=1000.0, output=1000.0)})
    budget = Budget(max_usd=0.5)

    class Slow(FakeProvider):
        async def complete(self, request: ChatRequest):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.01)
            return await super().complete(request)

    provider = Slow(lambda request, i: "x" * 40)  # 10 completion tokens
    provider.base_url = "https://api.example.com"
    client = LLMClient(
        provider, limits=EndpointLimits(max_in_flight=2), prices=prices, budget=budget
    )
    requests = [ChatRequest((Message("user", f"q{i:03d}" * 10),), max_tokens=20) for i in range(64)]

    async def go() -> list[object]:
        return await asyncio.gather(
            *(client.complete(r, stage="s") for r in requests), return_exceptions=True
        )

    results = asyncio.run(go())
    refused = [r for r in results if isinstance(r, BudgetExceededError)]
    assert refused and len(provider.requests) < 64
    assert budget.spent_usd <= 0.5  # within the limit: actual usage never passed the reservations
    assert budget.peak_reserved_usd <= 2 * budget.largest_reservation_usd + 1e-12
