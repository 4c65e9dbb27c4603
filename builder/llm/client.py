"""`LLMClient`: cache, limits, retries, budget and usage around any `ChatProvider`.

Stages call `await client.complete(request, stage="teacher")` and nothing else; providers only
talk to their endpoint.
"""

from __future__ import annotations

import asyncio
import dataclasses

from builder.errors import ConfigError, LLMError, PermanentLLMError
from builder.llm.admission import Estimate, Gate, through_gates
from builder.llm.batch.queue import BatchDeferred, BatchQueue
from builder.llm.budget import Budget
from builder.llm.cache import RequestCache, key_for
from builder.llm.endpoint_kinds import is_paid as endpoint_is_paid
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse, Usage
from builder.llm.usage import PriceTable, StageUsage, UsageLedger

__all__ = ["LLMClient", "is_paid"]

# Slot order: a step's first requests before the judging of steps further along, so that
# chains with the most left to do are not queued (critical path first; see llm/slots.py).
FIRST_STAGES = frozenset({"references", "teacher", "compressor"})
TRUNCATED = frozenset({"length", "max_tokens"})  # OpenAI finish_reason, Anthropic stop_reason


def stage_priority(stage: str) -> int:
    return 0 if stage in FIRST_STAGES else 1


def is_paid(provider: ChatProvider) -> bool:
    """Whether requests cost money (the config's price check asks the same function)."""
    return endpoint_is_paid(provider.provider, provider.base_url)


class LLMClient:
    """One endpoint's client. `usage` holds per-stage totals; `budget` may be shared by clients."""

    def __init__(
        self,
        provider: ChatProvider,
        *,
        cache: RequestCache | None = None,
        limits: EndpointLimits | None = None,
        retry: RetryPolicy | None = None,
        prices: PriceTable | None = None,
        budget: Budget | None = None,
        usage: UsageLedger | None = None,
        batch: BatchQueue | None = None,
        role: str = "",
        deadline_s: float | None = None,
    ) -> None:
        self.provider = provider
        self.batch = batch if batch is not None and batch.batched(role) else None
        self.role = role
        self.cache = cache
        self.limits = limits or EndpointLimits()
        self.retry = retry or RetryPolicy()
        self.prices = prices
        self.budget = budget
        self.usage = usage or UsageLedger()
        self.deadline_s = deadline_s  # total time of one HTTP request, the body included
        self._in_flight: dict[str, asyncio.Future[ChatResponse]] = {}
        unpriced = prices is None or prices.get(provider.model) is None
        if budget is not None and budget.max_usd is not None and unpriced and is_paid(provider):
            raise ConfigError(
                f"limits.budget_usd is set but model {provider.model!r} has no price; add it "
                "to the price table (input / cached_input / output USD per million tokens)"
            )

    async def aclose(self) -> None:
        """Close the provider's connections when it has any (the cache may be shared: kept)."""
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, request: ChatRequest, *, stage: str) -> ChatResponse:
        """Exactly `request.n` completions, from the cache or the endpoint.

        Raises `PermanentLLMError` (fix the request or config), `TransientLLMError` after the
        last retry, or `BudgetExceededError` before sending new work once the budget is spent.
        """
        stats = self.usage.stage(stage)
        key = key_for(self.provider, request) if self.cache is not None else None
        if self.cache is not None and key is not None:
            cached = self.cache.get(key)
            if cached is not None:
                stats.cache_hits += 1
                return cached
            twin = self._in_flight.get(key)
            if twin is not None:  # an identical request is on its way: share its answer
                stats.cache_hits += 1
                return dataclasses.replace(await asyncio.shield(twin), cached=True)
            if self.batch is not None:  # sent with the next round's batch job
                blocked = self.batch.blocked(key)
                if blocked is not None:  # refused, or failed too often: never sent again
                    stats.errors[blocked.kind] += 1
                    raise blocked
                self.batch.defer(self.role, key, request, stage)
                raise BatchDeferred(f"{stage} request deferred to the next batch round")
            stats.cache_misses += 1
            self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            response = await self._complete_uncached(request, stats, key, stage)
        except BaseException as exc:
            if key is not None and key in self._in_flight:
                twin = self._in_flight.pop(key)
                twin.set_exception(exc)
                twin.exception()  # retrieved here: twins re-raise it, nobody else must
            raise
        if key is not None and key in self._in_flight:
            self._in_flight.pop(key).set_result(response)
        return response

    async def _complete_uncached(
        self, request: ChatRequest, stats: StageUsage, key: str | None, stage: str
    ) -> ChatResponse:
        try:
            response = await self._send(request, stats, stage_priority(stage))
        except LLMError as exc:
            stats.errors[exc.kind] += 1
            raise
        for completion in response.completions:
            stats.truncated += completion.finish_reason in TRUNCATED
            stats.empty += not completion.text.strip() and not completion.tool_calls
        cost = self._cost(response.usage)
        price = self.prices.get(self.provider.model) if self.prices is not None else None
        stats.add_usage(response.usage, cost, price.parts(response.usage) if price else None)
        if self.cache is not None and key is not None:
            self.cache.put(key, response)
        return dataclasses.replace(response, cost_usd=cost, cached=False)

    def _cost(self, usage: Usage) -> float:
        if self.prices is None:
            return 0.0
        return self.prices.cost(self.provider.model, usage)

    def _worst_case(self, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.prices.get(self.provider.model) if self.prices is not None else None
        return price.worst_case(prompt_tokens, completion_tokens) if price is not None else 0.0

    def _gate(self, request: ChatRequest, priority: int) -> Gate:
        return Gate(
            Estimate.of_chat(request),
            self.limits,
            self.budget,
            self._worst_case,
            self._cost,
            self.deadline_s,
            priority,
        )

    async def _attempt(self, request: ChatRequest, gate: Gate) -> ChatResponse:
        """One try: providers that fan out open the gate per HTTP request themselves."""
        if getattr(self.provider, "uses_gate", False):
            return await self.provider.complete(request, gate=gate)  # type: ignore[call-arg]
        async with gate.http(request.n) as sent:
            response = await self.provider.complete(request)
            sent.usage = response.usage
        return response

    async def _send(self, request: ChatRequest, stats: StageUsage, priority: int) -> ChatResponse:
        """Send with retries; slots are held per HTTP request, not while backing off."""
        response = await through_gates(
            lambda: self._gate(request, priority),
            lambda gate: self._attempt(request, gate),
            self.retry,
            stats,
        )
        if len(response.completions) != request.n:
            raise PermanentLLMError(
                f"{self.provider.provider} returned {len(response.completions)} "
                f"completions for n={request.n}; this is a provider adapter bug"
            )
        return response
