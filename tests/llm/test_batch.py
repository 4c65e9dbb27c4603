"""Batch jobs against local stand-ins of both batch APIs, over real HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from builder.llm.anthropic_provider import AnthropicProvider
from builder.llm.batch.anthropic_batch import AnthropicBatch
from builder.llm.batch.backend import BatchBackend
from builder.llm.batch.ledger import BatchLedger
from builder.llm.batch.openai_batch import OpenAIBatch
from builder.llm.batch.queue import BatchQueue, PollPolicy, RoundReport
from builder.llm.cache import RequestCache, key_for
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message
from tests.llm.batch_servers import BatchAPIServer
from tests.llm.servers import FakeAPIServer

FAST = PollPolicy(first_s=0.01, factor=1.5, max_s=0.05)
REQUESTS = [
    ChatRequest((Message("user", f"question {i}"),), n=1 + i % 3, temperature=0.7, seed=i)
    for i in range(6)
]


def echo(body: dict[str, Any], index: int, number: int) -> str:
    """The same answer for the same request, whichever server and whenever asked."""
    return f"answer to {body['messages'][-1]['content']!s} #{index}"


def anthropic_echo(body: dict[str, Any], number: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"answer to {body['messages'][-1]['content']!s}"}]


def _queue(tmp: Path, role: str, backend: BatchBackend) -> BatchQueue:
    ledger = BatchLedger(tmp / "_state" / "batches.sqlite")
    return BatchQueue(ledger, RequestCache(tmp / "cache.sqlite"), {role: backend}, poll=FAST)


def _openai_batch(server: BatchAPIServer) -> OpenAIBatch:
    return OpenAIBatch(OpenAIProvider("m", base_url=server.openai_url))


def _defer_all(queue: BatchQueue, provider: Any, requests: list[ChatRequest]) -> list[str]:
    keys = [key_for(provider, r) for r in requests]
    for key, request in zip(keys, requests, strict=True):
        queue.defer("agent", key, request)
    return keys


def test_openai_batch_answers_equal_the_online_answers_and_land_in_the_cache(
    tmp_path: Path,
) -> None:
    with (
        FakeAPIServer(text=echo) as online_server,
        BatchAPIServer(FakeAPIServer(text=echo)) as batch_server,
    ):
        online = OpenAIProvider("m", base_url=online_server.base_url)
        batch = OpenAIBatch(OpenAIProvider("m", base_url=batch_server.openai_url))
        queue = _queue(tmp_path, "agent", batch)
        keys = _defer_all(queue, batch.online, REQUESTS)
        report = asyncio.run(queue.run_round())
        assert report.submitted_jobs == 1 and report.collected == len(REQUESTS)

        async def online_answers() -> list[Any]:
            return [await online.complete(r) for r in REQUESTS]

        for key, expected in zip(keys, asyncio.run(online_answers()), strict=True):
            cached = queue.cache.get(key)
            assert cached is not None
            assert [c.text for c in cached.completions] == [c.text for c in expected.completions]
        assert set(batch_server.submitted.values()) == {1}


def test_a_job_split_by_the_providers_request_limit(tmp_path: Path) -> None:
    with BatchAPIServer(FakeAPIServer(text=echo)) as server:
        batch = OpenAIBatch(OpenAIProvider("m", base_url=server.openai_url), max_requests=4)
        queue = _queue(tmp_path, "agent", batch)
        _defer_all(queue, batch.online, REQUESTS)
        report = asyncio.run(queue.run_round())
        assert report.submitted_jobs == 2 and server.creates == 2
        assert report.collected == len(REQUESTS)


def test_a_resume_after_a_crash_between_submit_and_collect_submits_nothing_again(
    tmp_path: Path,
) -> None:
    with BatchAPIServer(FakeAPIServer(text=echo), polls_to_finish=3) as server:
        first = _queue(tmp_path, "agent", _openai_batch(server))
        _defer_all(first, first.backends["agent"].online, REQUESTS)  # type: ignore[attr-defined]

        submitted = RoundReport()
        asyncio.run(first._submit(submitted))  # the process dies before it polls
        assert submitted.submitted_lines == len(REQUESTS)
        batch = _openai_batch(server)
        resumed = _queue(tmp_path, "agent", batch)  # a new process: only the files remain
        keys = _defer_all(resumed, batch.online, REQUESTS)
        report = asyncio.run(resumed.run_round())
        assert report.submitted_jobs == 0 and report.collected == len(REQUESTS)
        assert all(resumed.cache.get(k) is not None for k in keys)
        assert server.creates == 1 and set(server.submitted.values()) == {1}


def test_a_job_submitted_but_not_recorded_is_found_by_its_handle(tmp_path: Path) -> None:
    with BatchAPIServer(FakeAPIServer(text=echo)) as server:
        batch = OpenAIBatch(OpenAIProvider("m", base_url=server.openai_url))
        queue = _queue(tmp_path, "agent", batch)
        keys = _defer_all(queue, batch.online, REQUESTS[:2])
        lines = [(ln, k) for k, r in zip(keys, REQUESTS[:2], strict=True)
                 for ln in batch.lines(f"{k[:40]}-0", r)]  # fmt: skip
        handle = queue.ledger.record_intent(
            "openai", "agent", [(ln.custom_id, k, ln.sample) for ln, k in lines]
        )
        asyncio.run(batch.submit(handle, [ln for ln, _ in lines]))  # crash before recording
        queue.backends["agent"] = _openai_batch(server)  # the next process
        report = asyncio.run(queue.run_round())
        assert report.recovered_jobs == 1 and report.submitted_jobs == 0
        assert report.collected == 2 and server.creates == 1


def _fresh(backend: BatchBackend, server: BatchAPIServer) -> BatchBackend:
    if isinstance(backend, OpenAIBatch):
        return _openai_batch(server)
    return AnthropicBatch(AnthropicProvider("m", base_url=server.anthropic_url))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_expired_and_failed_requests_are_resubmitted_alone_and_recovered(
    tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    answers = FakeAPIServer(text=echo, anthropic_content=anthropic_echo)

    def fail_question_4(custom_id: str, body: dict[str, Any]) -> bool:
        return "question 4" in str(body["messages"][-1]["content"])

    with BatchAPIServer(answers, expire_jobs=1, fail=fail_question_4) as server:
        backend: BatchBackend
        if api == "openai":
            backend = OpenAIBatch(OpenAIProvider("m", base_url=server.openai_url))
        else:
            backend = AnthropicBatch(AnthropicProvider("m", base_url=server.anthropic_url))
        online: Any = backend.online  # type: ignore[attr-defined]
        queue = _queue(tmp_path, "agent", backend)
        keys = _defer_all(queue, online, REQUESTS)
        first = asyncio.run(queue.run_round())
        queue.backends["agent"] = backend = _fresh(backend, server)  # one event loop per client
        assert 0 < first.collected < len(REQUESTS) and first.failed_lines > 0
        missing = [r for k, r in zip(keys, REQUESTS, strict=True) if queue.cache.get(k) is None]
        _defer_all(queue, online, REQUESTS)  # the next round asks for everything again
        second = asyncio.run(queue.run_round())
        assert second.submitted_lines == sum(len(backend.lines("x", r)) for r in missing)
        assert all(queue.cache.get(k) is not None for k in keys)
        submitted_twice = [d for d, n in server.submitted.items() if n > 1]
        assert len(submitted_twice) <= len(missing)  # only what had not been answered
        if api == "anthropic":
            n3 = queue.cache.get(keys[2])
            assert n3 is not None and len(n3.completions) == 3  # one line per sample
