"""Fault behaviour of OpenAIProvider + LLMClient against a real local HTTP server, on every
transport (the direct aiohttp POST and the SDK on aiohttp and httpx): the same faults must map
to the same errors whichever stack carries the request."""

from __future__ import annotations

import asyncio

import pytest

from builder.errors import PermanentLLMError, TransientLLMError
from builder.llm.client import LLMClient
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.openai_provider import TRANSPORTS, OpenAIProvider
from builder.llm.protocol import ChatRequest, ChatResponse
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer, Fault, status

REQUEST = ChatRequest((Message("user", "List the files."),), n=3, seed=7)


class SleepRecorder:
    """Records retry delays without waiting them out."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_client(
    server: FakeAPIServer, sleep: SleepRecorder, transport: str, attempts: int = 4
) -> LLMClient:
    provider = OpenAIProvider(
        "gpt-test", base_url=server.base_url, timeout=0.4, transport=transport
    )
    retry = RetryPolicy(max_attempts=attempts, base_delay_s=0.01, sleep=sleep)
    return LLMClient(provider, retry=retry, limits=EndpointLimits(max_in_flight=8))


def run(client: LLMClient, request: ChatRequest = REQUEST) -> ChatResponse:
    return asyncio.run(client.complete(request, stage="agent"))


TRANSIENT = [
    (status(500), "server_error"),
    (status(503), "server_error"),
    (Fault("slow", delay_s=1.2), "timeout"),
    (Fault("truncate"), "connection"),
    (Fault("drop"), "connection"),
    (Fault("invalid_json"), "bad_response"),
]


@pytest.mark.parametrize(
    ("fault", "kind"), TRANSIENT, ids=["500", "503", "slow", "truncated", "dropped", "invalid-json"]
)
def test_transient_faults_are_retried_and_yield_exactly_the_answer_of_the_good_request(
    fault: Fault, kind: str, transport: str
) -> None:
    sleep = SleepRecorder()
    with FakeAPIServer(faults=[fault]) as server:
        client = make_client(server, sleep, transport)
        response = run(client)
        assert server.count == 2
    texts = [c.text for c in response.completions]
    assert texts == [f"reply 2.{i} seed=7" for i in range(3)]  # all from request 2, none lost
    assert client.usage.stage("agent").errors == {kind: 1}
    assert client.usage.stage("agent").requests == 1
    assert len(sleep.delays) == 1


def test_rate_limit_waits_what_retry_after_says_plus_jitter(transport: str) -> None:
    sleep = SleepRecorder()
    with FakeAPIServer(
        faults=[status(429, retry_after="3"), status(429, retry_after_ms="250")]
    ) as s:
        client = make_client(s, sleep, transport)
        response = run(client)
        assert s.count == 3
    # honoured, and stretched by up to half (jitter) so turned-back requests do not return at once
    assert 3.0 <= sleep.delays[0] <= 4.5 and 0.25 <= sleep.delays[1] <= 0.375
    assert len(response.completions) == 3
    assert client.usage.stage("agent").errors == {"rate_limit": 2}


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (400, "check the model's limits and the parameters"),
        (401, "set OPENAI_API_KEY"),
        (404, "check `model` and `base_url`"),
    ],
)
def test_client_errors_fail_fast_without_retry_and_say_what_to_fix(
    code: int, fix: str, transport: str
) -> None:
    sleep = SleepRecorder()
    with FakeAPIServer(faults=[status(code)]) as server:
        client = make_client(server, sleep, transport)
        with pytest.raises(PermanentLLMError, match=fix) as info:
            run(client)
        assert server.count == 1
    assert f"HTTP {code}" in str(info.value)
    assert sleep.delays == []
    assert sum(client.usage.stage("agent").errors.values()) == 1


def test_retries_stop_after_max_attempts_with_the_last_error(transport: str) -> None:
    sleep = SleepRecorder()
    with FakeAPIServer(faults=[status(502)] * 5) as server:
        client = make_client(server, sleep, transport, attempts=3)
        with pytest.raises(TransientLLMError, match="HTTP 502"):
            run(client)
        assert server.count == 3
    assert len(sleep.delays) == 2
    assert client.usage.stage("agent").requests == 0
    assert client.usage.stage("agent").errors == {"server_error": 3}


def test_concurrent_requests_under_faults_lose_and_duplicate_nothing(transport: str) -> None:
    faults = [status(500), Fault("truncate"), status(429, retry_after="0"), Fault("invalid_json")]
    requests = [ChatRequest((Message("user", f"task {i}"),), n=2) for i in range(12)]
    sleep = SleepRecorder()
    with FakeAPIServer(faults=faults, latency_s=0.01) as server:
        client = make_client(server, sleep, transport)

        async def all_of_them() -> list[ChatResponse]:
            return await asyncio.gather(*(client.complete(r, stage="agent") for r in requests))

        responses = asyncio.run(all_of_them())
        assert server.count == len(requests) + len(faults)
    texts = [c.text for r in responses for c in r.completions]
    assert all(len(r.completions) == 2 for r in responses)
    assert len(set(texts)) == len(texts) == 24
    assert client.usage.stage("agent").requests == 12
    assert sum(client.usage.stage("agent").errors.values()) == len(faults)
