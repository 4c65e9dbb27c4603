"""Several endpoints per role, over real HTTP: spread, stickiness per step, failover, return."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

from builder.config import validate_config
from builder.llm.client import LLMClient
from builder.llm.factory import build_clients
from builder.llm.limits import RetryPolicy
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest
from builder.llm.routing import RoutedProvider, ranking, step_key
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer


def step_requests(step: int, k: int) -> list[ChatRequest]:
    """k requests of one step: a shared 2-message prefix, then each its own last message."""
    prefix = (Message("system", "you are an agent"), Message("user", f"task of step {step}"))
    return [
        ChatRequest((*prefix, Message("user", f"variant {i}")), cache_prefix=2, seed=i)
        for i in range(k)
    ]


def prefix_of(body: dict) -> str:
    return body["messages"][1]["content"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def send_all(client: LLMClient, requests: list[ChatRequest]) -> None:
    await asyncio.gather(*(client.complete(r, stage="agent") for r in requests))


def test_steps_spread_over_endpoints_and_each_step_sticks_to_one() -> None:
    # the spread hangs on the servers' random ports (rendezvous hashing of step and URL): with
    # 60 steps a replica with fewer than 3 is a 1e-8 event (24 steps failed ~1.5% of runs)
    steps = 60
    with FakeAPIServer() as a, FakeAPIServer() as b, FakeAPIServer() as c:
        servers = [a, b, c]
        routed = RoutedProvider([OpenAIProvider("m", base_url=s.base_url) for s in servers])
        client = LLMClient(routed)
        requests = [r for step in range(steps) for r in step_requests(step, 3)]
        asyncio.run(send_all(client, requests))
        per_server = [Counter(prefix_of(body) for body in s.requests) for s in servers]
    # a transient error takes a replica out of rotation and moves its steps: say so first
    assert not client.usage.total().errors, client.usage.total().errors
    assert sum(sum(c.values()) for c in per_server) == 3 * steps
    assert all(len(c) >= 3 for c in per_server), per_server  # every replica serves several
    for step in range(steps):  # each step on the replica that ranks first for it
        first = ranking(step_key(step_requests(step, 1)[0]), routed.urls)[0]
        assert per_server[first][f"task of step {step}"] == 3, step
    for counts in per_server:
        assert set(counts.values()) == {3}  # a step's 3 requests all went to one replica
    steps = [set(c) for c in per_server]
    assert not (steps[0] & steps[1]) and not (steps[1] & steps[2]) and not (steps[0] & steps[2])


def test_a_failed_endpoint_leaves_rotation_and_returns_after_the_cooldown() -> None:
    clock = Clock()
    with FakeAPIServer() as a, FakeAPIServer() as b:
        dead = FakeAPIServer()
        dead_url = dead.base_url
        dead._httpd.server_close()  # nothing listens there: connections are refused
        urls = [a.base_url, dead_url, b.base_url]
        routed = RoutedProvider(
            [OpenAIProvider("m", base_url=u, timeout=5) for u in urls], clock=clock
        )
        fast = RetryPolicy(max_attempts=3, base_delay_s=0.0, jitter=0.0)
        client = LLMClient(routed, retry=fast)

        async def scenario() -> None:
            await send_all(client, [r for s in range(30) for r in step_requests(s, 2)])
            assert a.count + b.count == 60  # every request answered by a live replica
            assert routed.sent[1] >= 1  # the dead one was tried (by the requests sent at once)
            tried = routed.sent[1]
            await send_all(client, [r for s in range(30, 40) for r in step_requests(s, 2)])
            assert routed.sent[1] == tried  # out of rotation: no more attempts
            clock.now += routed.cooldown_s + 1  # cooldown over: it is tried again
            await send_all(client, [r for s in range(40, 70) for r in step_requests(s, 1)])
            assert routed.sent[1] > tried
            assert a.count + b.count == 60 + 20 + 30

        asyncio.run(scenario())


def test_a_list_of_base_urls_in_the_config_builds_a_routed_provider(tmp_path) -> None:
    cfg = validate_config(
        {
            "inputs": ["x"],
            "teacher": {"provider": "openai", "base_url": ["http://h1/v1", "http://h2/v1"]},
            "agent": {"provider": "openai", "base_url": "http://h3/v1"},
            "output": {"dir": str(tmp_path)},
        }
    )
    clients = build_clients(cfg, tmp_path)
    try:
        assert isinstance(clients.teacher.provider, RoutedProvider)
        assert clients.teacher.provider.urls == ["http://h1/v1", "http://h2/v1"]
        assert not isinstance(clients.agent.provider, RoutedProvider)
    finally:
        clients.close()
    dumped = json.dumps(cfg.model_dump(mode="json"))
    assert "http://h2/v1" in dumped
