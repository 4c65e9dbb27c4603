"""Limits count HTTP requests: an n-sample request to Anthropic (no `n`) or to a server that
ignores n takes one slot per HTTP request, and each request has a total deadline."""

from __future__ import annotations

import asyncio

import pytest

from builder.errors import TransientLLMError
from builder.llm.anthropic_provider import AnthropicProvider
from builder.llm.client import LLMClient
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer, Fault


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def ask(i: int, n: int) -> ChatRequest:
    return ChatRequest((Message("user", f"question {i}"),), n=n, max_tokens=16)


def send_all(client: LLMClient, requests: list[ChatRequest]) -> None:
    async def go() -> None:
        await asyncio.gather(*(client.complete(r, stage="s") for r in requests))
        await client.aclose()

    asyncio.run(go())


def test_anthropic_samples_in_flight_never_exceed_the_concurrency_limit() -> None:
    with FakeAPIServer(api="anthropic", latency_s=0.05) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, timeout=5)
        client = LLMClient(provider, limits=EndpointLimits(max_in_flight=3))
        send_all(client, [ask(i, n=8) for i in range(4)])
        assert server.count == 32  # 4 logical requests x 8 samples
        assert server.peak_in_flight == 3  # the limit, reached and never passed
    stats = client.usage.stage("s")
    assert (stats.requests, stats.http_requests) == (4, 32)


def test_a_server_ignoring_n_gets_its_per_sample_requests_through_the_same_slots() -> None:
    with FakeAPIServer(latency_s=0.05, honour_n=False) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, timeout=5)
        client = LLMClient(provider, limits=EndpointLimits(max_in_flight=2))
        send_all(client, [ask(i, n=4) for i in range(3)])
        assert server.count == 12
        assert server.peak_in_flight == 2
    assert client.usage.stage("s").http_requests == 12


def test_a_body_trickled_slowly_hits_the_total_deadline() -> None:
    # the SDK's timeout is per read, which a byte every 0.2 s never trips
    with FakeAPIServer(faults=[Fault("trickle", delay_s=0.2)]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, timeout=5)
        retry = RetryPolicy(max_attempts=1)
        client = LLMClient(provider, retry=retry, deadline_s=1.0)
        with pytest.raises(TransientLLMError, match="deadline of 1 s") as caught:
            send_all(client, [ask(0, n=1)])
    assert caught.value.kind == "timeout"
