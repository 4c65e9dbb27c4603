"""Concurrency bound, rate limiters on a logical clock, and the retry delay policy."""

from __future__ import annotations

import asyncio

import pytest

from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.llm.limits import EndpointLimits, RateLimiter, RetryPolicy
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer


class LogicalClock:
    """A clock that only moves when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def ask(i: int, max_tokens: int | None = None) -> ChatRequest:
    return ChatRequest((Message("user", f"q{i}"),), max_tokens=max_tokens)


def test_in_flight_requests_never_exceed_the_limit_and_reach_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits")
    limits = EndpointLimits(max_in_flight=4)
    with FakeAPIServer(latency_s=0.05) as server:
        client = LLMClient(OpenAIProvider("m", base_url=server.base_url), limits=limits)

        async def burst() -> None:
            await asyncio.gather(*(client.complete(ask(i), stage="s") for i in range(20)))

        asyncio.run(burst())
        assert server.count == 20
        assert server.peak_in_flight == 4
    assert limits.peak_in_flight == 4
    assert limits.in_flight == 0


def test_request_limiter_spaces_requests_after_the_burst() -> None:
    clock = LogicalClock()
    limiter = RateLimiter(120, burst=2, clock=clock, sleep=clock.sleep)
    times = []

    async def take(count: int) -> None:
        for _ in range(count):
            await limiter.acquire()
            times.append(clock.now)

    asyncio.run(take(6))
    assert times == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 2.0])


def test_token_limiter_lets_an_oversized_request_through_and_charges_the_debt() -> None:
    clock = LogicalClock()
    limiter = RateLimiter(600, burst=600, clock=clock, sleep=clock.sleep)  # 10 tokens/s

    async def scenario() -> list[float]:
        seen = []
        for amount in (400, 400, 900, 100):
            await limiter.acquire(amount)
            seen.append(clock.now)
        return seen

    # 400 free; 400 waits 20 s; 900 > burst waits for a full bucket; 100 pays the 300 debt
    assert asyncio.run(scenario()) == pytest.approx([0.0, 20.0, 80.0, 120.0])


def test_a_refund_after_the_response_frees_tokens_for_the_next_request() -> None:
    clock = LogicalClock()
    limiter = RateLimiter(600, burst=600, clock=clock, sleep=clock.sleep)

    async def scenario() -> float:
        await limiter.acquire(600)
        limiter.adjust(-300)  # the server reported half the estimate
        await limiter.acquire(300)
        return clock.now

    assert asyncio.run(scenario()) == 0.0


def send_times(
    limits: EndpointLimits, clock: LogicalClock, requests: list[ChatRequest]
) -> list[float]:
    """Logical times at which the client let each request reach the provider."""
    sent: list[float] = []

    def responder(request: ChatRequest, index: int) -> str:
        sent.append(clock.now)
        return "x" * 400  # 100 tokens for FakeProvider's usage

    client = LLMClient(FakeProvider(responder), limits=limits)

    async def run() -> None:
        await asyncio.gather(*(client.complete(r, stage="s") for r in requests))

    asyncio.run(run())
    return sent


def test_client_requests_follow_the_rpm_limit() -> None:
    clock = LogicalClock()
    limits = EndpointLimits(rpm=120, clock=clock, sleep=clock.sleep)  # burst of 2, then 0.5 s
    sent = send_times(limits, clock, [ask(i) for i in range(5)])
    assert sent == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5])


def test_client_requests_follow_the_tpm_limit_with_estimates_matching_usage() -> None:
    clock = LogicalClock()
    limits = EndpointLimits(tpm=600, clock=clock, sleep=clock.sleep)  # 10 tokens/s, burst 600
    requests = [ChatRequest((Message("user", "y" * 400),), max_tokens=100) for _ in range(5)]
    # each is estimated at 100 prompt + 100 completion tokens, and FakeProvider reports the same
    assert send_times(limits, clock, requests) == pytest.approx([0.0, 0.0, 0.0, 20.0, 40.0])


def test_backoff_doubles_up_to_the_cap_and_retry_after_wins() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.0)
    assert [policy.delay(a, None) for a in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.delay(1, 7.5) == 7.5


def test_retry_after_within_the_cap_is_jittered_upwards() -> None:
    top = RetryPolicy(max_retry_after_s=30.0, jitter=0.5, random=lambda: 0.999999)
    bottom = RetryPolicy(max_retry_after_s=30.0, jitter=0.5, random=lambda: 0.0)
    assert bottom.delay(1, 30.0) == 30.0 and top.delay(1, 30.0) == pytest.approx(45.0, abs=1e-4)
    assert bottom.delay(1, 2.0) == 2.0 and top.delay(1, 2.0) == pytest.approx(3.0, abs=1e-5)


def test_retry_after_zero_missing_or_past_the_cap_falls_back_to_exponential_backoff() -> None:
    """As the SDKs do (openai/_base_client.py `_calculate_retry_timeout`): 0 is no hint, and
    a wait past the cap is not honoured; five immediate retries would spend a request."""
    policy = RetryPolicy(base_delay_s=0.5, max_retry_after_s=30.0, jitter=0.0)
    backoff = [policy.delay(a, None) for a in (1, 2, 3)]
    assert backoff == [0.5, 1.0, 2.0]
    assert [policy.delay(a, 0.0) for a in (1, 2, 3)] == backoff
    assert [policy.delay(a, 3600.0) for a in (1, 2, 3)] == backoff


def test_jitter_stays_within_the_configured_fraction() -> None:
    low = RetryPolicy(base_delay_s=2.0, jitter=0.5, random=lambda: 0.999999)
    high = RetryPolicy(base_delay_s=2.0, jitter=0.5, random=lambda: 0.0)
    assert low.delay(1, None) == pytest.approx(1.0, abs=1e-5)
    assert high.delay(1, None) == 2.0
