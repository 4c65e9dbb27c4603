"""No API key reaches a file, a log record or an error message, even when a server echoes it."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from pathlib import Path

import pytest

from builder.errors import LLMError
from builder.llm.anthropic_provider import AnthropicProvider
from builder.llm.cache import RequestCache
from builder.llm.client import LLMClient
from builder.llm.limits import RetryPolicy
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatProvider, ChatRequest
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer, status

OPENAI_CANARY = "sk-canary-0penai-7f3a9c2e5b1d"
ANTHROPIC_CANARY = "sk-ant-canary-4e8b2a6c0d9f"
ECHO = '{"error": {"message": "Incorrect API key provided: {auth}"}}'


async def exercise(provider: ChatProvider, cache: RequestCache, errors: list[str]) -> LLMClient:
    """A 401 whose body echoes the key, then successes (each asked twice: one cache hit)."""

    async def no_wait(delay: float) -> None:
        return None

    client = LLMClient(provider, cache=cache, retry=RetryPolicy(sleep=no_wait))
    try:
        await client.complete(ChatRequest((Message("user", "denied?"),)), stage="agent")
    except LLMError as exc:
        errors.append(str(exc))
        errors.append("".join(traceback.format_exception(exc)))
    for i in range(3):
        request = ChatRequest((Message("user", f"question {i}"),), n=2, seed=i)
        await client.complete(request, stage="agent")
        await client.complete(request, stage="agent")
    return client


def test_keys_never_reach_files_logs_or_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_CANARY)
    caplog.set_level(logging.DEBUG)
    cache = RequestCache(tmp_path / "cache" / "requests.sqlite")
    errors: list[str] = []
    faults = [status(401, ECHO), status(429, retry_after="0")]  # 401 first: fails fast
    with (
        FakeAPIServer(api="openai") as openai_server,
        FakeAPIServer(api="anthropic") as anthropic_server,
    ):
        openai_client = asyncio.run(
            exercise(OpenAIProvider("gpt-x", base_url=openai_server.base_url), cache, errors)
        )
        anthropic_client = asyncio.run(
            exercise(
                AnthropicProvider("claude-x", base_url=anthropic_server.base_url), cache, errors
            )
        )
        # the keys did travel, to the servers only
        assert OPENAI_CANARY in openai_server.headers[0]["authorization"]
        assert ANTHROPIC_CANARY in json.dumps(anthropic_server.headers[0])
    with FakeAPIServer(api="openai", faults=faults) as server:
        asyncio.run(exercise(OpenAIProvider("gpt-y", base_url=server.base_url), cache, errors))
    with FakeAPIServer(api="anthropic", faults=faults) as server:
        asyncio.run(
            exercise(AnthropicProvider("claude-y", base_url=server.base_url), cache, errors)
        )
    cache.close()

    report = tmp_path / "out" / "usage.json"
    report.parent.mkdir()
    usage = {"openai": openai_client.usage.as_dict(), "anthropic": anthropic_client.usage.as_dict()}
    report.write_text(json.dumps(usage))

    assert len(errors) == 4 and "Incorrect API key provided: Bearer ***" in errors[0]
    assert openai_client.usage.stage("agent").cache_hits == 3
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".sqlite", ".json"}
    records = [r.getMessage() for r in caplog.records]
    records += [
        logging.Formatter().formatException(r.exc_info) for r in caplog.records if r.exc_info
    ]
    assert any("retry" in r for r in records)
    for canary in (OPENAI_CANARY, ANTHROPIC_CANARY):
        for path in files:
            assert canary.encode() not in path.read_bytes(), path
        assert not [r for r in records if canary in r]
        assert not [e for e in errors if canary in e]
