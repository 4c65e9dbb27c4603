"""LLMClient orchestration with an injected fake provider: usage, cost, budget, retries."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from builder.errors import BudgetExceededError, ConfigError, PermanentLLMError, TransientLLMError
from builder.llm.cache import RequestCache
from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.llm.limits import RetryPolicy
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from builder.llm.usage import Budget, ModelPrice, PriceTable
from schemas.trajectories import Message

PRICES = PriceTable.from_mapping({"fake": {"input": 2.0, "cached_input": 0.5, "output": 8.0}})


def ask(text: str, n: int = 1) -> ChatRequest:
    return ChatRequest((Message("user", text),), n=n)


class ScriptedProvider:
    """Raises the scripted errors first, then answers with fixed usage; counts calls."""

    provider = "scripted"
    base_url: str | None = None

    def __init__(self, *errors: Exception, n_override: int | None = None) -> None:
        self.model = "fake"
        self.errors = list(errors)
        self.calls = 0
        self.n_override = n_override

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        n = self.n_override or request.n
        completions = tuple(Completion(f"c{self.calls}.{i}") for i in range(n))
        return ChatResponse(completions, Usage(1000, 100, 400), 0.01, "fake-2025-01-01")


def run(client: LLMClient, *requests: ChatRequest, stage: str = "s") -> list[ChatResponse]:
    async def go() -> list[ChatResponse]:
        return [await client.complete(r, stage=stage) for r in requests]

    return asyncio.run(go())


def no_wait_retry(attempts: int = 4) -> RetryPolicy:
    async def sleep(delay: float) -> None:
        return None

    return RetryPolicy(max_attempts=attempts, sleep=sleep)


def test_cost_uses_input_cached_and_output_prices_per_million() -> None:
    client = LLMClient(ScriptedProvider(), prices=PRICES)
    (response,) = run(client, ask("a"))
    expected = (600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6
    assert response.cost_usd == pytest.approx(expected)
    assert client.usage.stage("s").cost_usd == pytest.approx(expected)


def test_price_lookup_falls_back_to_the_longest_model_prefix() -> None:
    table = PriceTable({"gpt-4o": ModelPrice(1, 1), "gpt-4o-mini": ModelPrice(2, 2)})
    assert table.get("gpt-4o-mini-2024-07-18") == ModelPrice(2, 2)
    assert table.get("gpt-4o-2024-08-06") == ModelPrice(1, 1)
    assert table.get("claude") is None


def test_bad_price_config_fails_fast_with_the_expected_keys() -> None:
    with pytest.raises(ConfigError, match="needs `input` and `output`"):
        PriceTable.from_mapping({"m": {"inputs": 1.0}})


def test_usage_is_totalled_per_stage_and_for_the_run(tmp_path: Path) -> None:
    provider = FakeProvider(lambda request, i: "abcdefgh")
    client = LLMClient(provider, cache=RequestCache(tmp_path / "c.sqlite"))
    run(client, ask("x" * 40, n=2), ask("x" * 40, n=2), stage="teacher")
    run(client, ask("y" * 80), stage="agent")
    teacher, agent = client.usage.stage("teacher"), client.usage.stage("agent")
    assert (teacher.requests, teacher.cache_hits, teacher.cache_misses) == (1, 1, 1)
    assert (teacher.prompt_tokens, teacher.completion_tokens) == (10, 4)
    assert (agent.requests, agent.prompt_tokens, agent.completion_tokens) == (1, 20, 2)
    total = client.usage.as_dict()["total"]
    assert (total["requests"], total["prompt_tokens"], total["cache_hits"]) == (2, 30, 1)
    assert len(provider.requests) == 2


def test_budget_in_tokens_stops_new_requests_but_not_cache_hits(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    budget = Budget(max_tokens=2000)
    client = LLMClient(provider, cache=RequestCache(tmp_path / "c.sqlite"), budget=budget)
    run(client, ask("a"), ask("b"))  # 1100 tokens each: the second crosses the limit
    with pytest.raises(BudgetExceededError, match=r"limits\.budget_tokens=2000"):
        run(client, ask("c"))
    assert provider.calls == 2
    (again,) = run(client, ask("a"))
    assert again.cached
    assert client.usage.stage("s").errors == {"budget": 1}


def test_budget_in_usd_stops_new_requests_and_says_how_to_go_on() -> None:
    provider = ScriptedProvider()  # each request costs $0.0022 and reserves 256 x $8/M
    client = LLMClient(provider, prices=PRICES, budget=Budget(max_usd=0.004))
    run(client, ask("a"))
    # spent 0.0022 + a worst case of 0.0020 would pass 0.004: refused before sending
    with pytest.raises(BudgetExceededError, match=r"Raise it \(--set limits\.budget_usd=\.\.\.\)"):
        run(client, ask("b"))
    assert provider.calls == 1


def test_a_usd_budget_without_a_price_for_a_paid_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="has no price"):
        LLMClient(ScriptedProvider(), budget=Budget(max_usd=1.0))
    local = ScriptedProvider()
    local.base_url = "http://127.0.0.1:8080/v1"  # a self-hosted server costs nothing
    client = LLMClient(local, budget=Budget(max_usd=1.0))
    run(client, ask("a"), ask("b"))
    assert client.usage.stage("s").cost_usd == 0.0


def test_one_budget_can_be_shared_by_clients_of_different_stages() -> None:
    budget = Budget(max_tokens=1500)
    first = LLMClient(ScriptedProvider(), budget=budget)
    second_provider = ScriptedProvider()
    second = LLMClient(second_provider, budget=budget)
    run(first, ask("a"), ask("b"))
    with pytest.raises(BudgetExceededError):
        run(second, ask("c"))
    assert second_provider.calls == 0


def test_transient_errors_are_retried_with_growing_backoff() -> None:
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    provider = ScriptedProvider(TransientLLMError("503"), TransientLLMError("503"))
    retry = RetryPolicy(base_delay_s=1.0, jitter=0.0, sleep=sleep)
    (response,) = run(LLMClient(provider, retry=retry), ask("a", n=2))
    assert delays == [1.0, 2.0]
    assert [c.text for c in response.completions] == ["c3.0", "c3.1"]


def test_permanent_errors_are_not_retried() -> None:
    provider = ScriptedProvider(PermanentLLMError("HTTP 400: bad"))
    client = LLMClient(provider, retry=no_wait_retry())
    with pytest.raises(PermanentLLMError):
        run(client, ask("a"))
    assert provider.calls == 1
    assert client.usage.stage("s").errors == {"permanent": 1}


def test_a_provider_returning_the_wrong_number_of_completions_is_caught() -> None:
    client = LLMClient(ScriptedProvider(n_override=1), retry=no_wait_retry())
    with pytest.raises(PermanentLLMError, match="1 completions for n=3"):
        run(client, ask("a", n=3))


def test_failed_requests_are_not_cached(tmp_path: Path) -> None:
    provider = ScriptedProvider(PermanentLLMError("HTTP 400"))
    client = LLMClient(provider, cache=RequestCache(tmp_path / "c.sqlite"))
    with pytest.raises(PermanentLLMError):
        run(client, ask("a"))
    (response,) = run(client, ask("a"))
    assert not response.cached and provider.calls == 2


def test_identical_requests_in_flight_at_once_are_sent_once(tmp_path: Path) -> None:
    class Slow(FakeProvider):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            await asyncio.sleep(0.05)
            return await super().complete(request)

    provider = Slow(lambda request, i: f"answer to {request.messages[-1].content}")
    client = LLMClient(provider, cache=RequestCache(tmp_path / "c.sqlite"))

    async def together() -> list[ChatResponse]:
        return await asyncio.gather(
            *(client.complete(r, stage="s") for r in (ask("same"), ask("same"), ask("other")))
        )

    first, second, other = asyncio.run(together())
    assert len(provider.requests) == 2
    assert second.cached and not first.cached
    assert first.completions == second.completions != other.completions
    stats = client.usage.stage("s")
    assert (stats.cache_hits, stats.cache_misses, stats.requests) == (1, 2, 2)


def test_completions_cut_at_max_tokens_and_empty_ones_are_counted_by_stage() -> None:
    class Cut:
        provider, model, base_url = "fake", "m", None

        async def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(
                (Completion("", (), "length"), Completion("ok", (), "stop"), Completion(" "))
            )

    client = LLMClient(Cut())  # type: ignore[arg-type]
    asyncio.run(client.complete(ChatRequest((Message("user", "x"),), n=3), stage="teacher"))
    stats = client.usage.stage("teacher")
    assert (stats.truncated, stats.empty) == (1, 2)
