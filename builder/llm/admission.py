"""What every HTTP request of a logical request passes through: its concurrency slot and rate
limits, then its budget reservation, then a total deadline.

A logical request with n samples may be n HTTP requests (Anthropic has no `n`; some OpenAI-
compatible servers ignore it). Limits count what the endpoint sees, so providers that fan out
open one `gate.http(samples)` per HTTP request; the client opens one around providers that
do not (the embedded model, fakes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from builder.errors import TransientLLMError
from builder.llm.budget import Budget, Reservation
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.protocol import ChatRequest, Usage
from builder.llm.usage import StageUsage

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_COMPLETION_ESTIMATE = 256  # tokens per sample assumed when max_tokens is not set
CHARS_PER_TOKEN_WORST = 3  # prompt estimate for reservations: code and JSON run near 3


def prompt_estimate(request: ChatRequest, chars_per_token: int = 4) -> int:
    """A cheap estimate of the prompt's tokens from its characters."""
    chars = sum(len(m.content) + len(m.content_parts or "") for m in request.messages)
    return chars // chars_per_token


@dataclass
class Sent:
    """Filled by the provider inside `gate.http`: what the endpoint reported."""

    usage: Usage | None = None
    http_requests: int | None = None  # calls the server saw, when more than one went out


@dataclass(frozen=True)
class Estimate:
    """A request's tokens before it goes out: `prompt` for the TPM limiter (4 characters a
    token), `prompt_worst` for budget reservations (3), `per_sample` completion tokens at
    most per sample, and the HTTP calls one `gate.http` stands for (sent one after another,
    in one slot: a vLLM score is /tokenize calls, then /completions)."""

    prompt: int
    prompt_worst: int
    per_sample: int
    calls: int = 1

    @classmethod
    def of_chat(cls, request: ChatRequest) -> Estimate:
        return cls(
            prompt_estimate(request),
            prompt_estimate(request, CHARS_PER_TOKEN_WORST),
            request.max_tokens or DEFAULT_COMPLETION_ESTIMATE,
        )


class Gate:
    """The gate of one logical request (built per attempt: by `LLMClient` for chat, by the
    likelihood `Scorer` for scoring)."""

    def __init__(
        self,
        estimate: Estimate,
        limits: EndpointLimits,
        budget: Budget | None,
        worst_case_usd: Callable[[int, int], float],
        cost_usd: Callable[[Usage], float],
        deadline_s: float | None,
        priority: int = 0,
    ) -> None:
        self.estimate = estimate
        self.priority = priority  # for the slot queue: lower goes first
        self.limits = limits
        self.budget = budget
        self.worst_case_usd = worst_case_usd
        self.cost_usd = cost_usd
        self.deadline_s = deadline_s
        self.http_requests = 0

    @asynccontextmanager
    async def http(self, samples: int) -> AsyncIterator[Sent]:
        """Hold a slot and a reservation for one HTTP request asking for `samples` samples
        (or for the `estimate.calls` calls that stand for it)."""
        e = self.estimate
        completion = samples * e.per_sample
        estimate = e.prompt + completion
        reserved: list[Reservation] = []

        def admit() -> None:  # once the slot is held: queued requests have not passed it
            if self.budget is not None:
                usd = self.worst_case_usd(e.prompt_worst, completion)
                reserved.append(self.budget.reserve(usd, e.prompt_worst + completion))

        try:
            await self.limits.acquire(estimate, self.priority, requests=e.calls, admit=admit)
        except BaseException:
            if reserved and self.budget is not None:  # admitted, then cancelled
                self.budget.settle(reserved[0], None, 0.0)
            raise
        reservation = reserved[0] if reserved else None
        sent = Sent()
        handed = False
        try:
            self.http_requests += 1  # at least the first call reached the server
            try:
                async with asyncio.timeout(self.deadline_s):
                    yield sent
            except TimeoutError:
                raise TransientLLMError(
                    f"no complete answer within the request deadline of {self.deadline_s:g} s "
                    "(limits.timeout_s)",
                    kind="timeout",
                ) from None
            if sent.http_requests is not None:
                self._extra_calls(sent.http_requests)
        finally:
            actual = None if sent.usage is None else sent.usage.prompt_tokens
            if actual is not None and sent.usage is not None:
                actual += sent.usage.completion_tokens
            handed = bool(self.limits.release(estimate, actual))
            if reservation is not None and self.budget is not None:
                usage = sent.usage
                self.budget.settle(reservation, usage, self.cost_usd(usage) if usage else 0.0)
        if handed:  # reached on success only
            await hand_over()

    def _extra_calls(self, seen: int) -> None:
        """Count the calls the server saw; draw any beyond the expected ones (a retry inside
        the provider) from the request-rate limiter after the fact."""
        self.http_requests += seen - 1
        self.limits.add_requests(seen - self.estimate.calls)


async def through_gates(
    new_gate: Callable[[], Gate],
    attempt: Callable[[Gate], Awaitable[T]],
    retry: RetryPolicy,
    stats: StageUsage,
) -> T:
    """`attempt` through a fresh gate per try until one succeeds, waiting as `retry` says after
    a transient error (no slot is held while backing off). Every try's HTTP calls are booked
    in `stats`, and every error but the one raised at the end, which the caller books."""
    for number in range(1, retry.max_attempts + 1):
        gate = new_gate()
        try:
            return await attempt(gate)
        except TransientLLMError as exc:
            if number == retry.max_attempts:
                raise
            stats.errors[exc.kind] += 1
            kind = exc.kind
            delay = retry.delay(number, exc.retry_after)
            log.warning("%s; retry %d/%d in %.2fs", exc, number, retry.max_attempts - 1, delay)
        finally:
            stats.http_requests += gate.http_requests
        limits = gate.limits  # the progress line shows who backs off, and why
        limits.backing_off += 1
        limits.last_error = kind
        try:
            await retry.sleep(delay)
        finally:
            limits.backing_off -= 1
    raise AssertionError("unreachable")  # pragma: no cover


async def hand_over() -> None:
    """Let the request that was just handed our slot send before this reply's caller spends
    CPU on it. Replies come in waves (64 answers read in one loop pass): without this, every
    waiter sent only after all 64 callers had parsed, scored and built their next prompts,
    and the slots sat idle meanwhile. The first yield queues us behind the waiter woken by
    the release; the second behind the waiters of every other reply read in the same pass."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


class NoGate:
    """For a provider called directly (tests, tools): no limits, no budget, no deadline."""

    http_requests = 0

    @asynccontextmanager
    async def http(self, samples: int) -> AsyncIterator[Sent]:
        self.http_requests += 1
        yield Sent()
