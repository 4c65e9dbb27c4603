"""A managed llama.cpp server that dies mid-run (real server, killed with a real signal)."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from pathlib import Path

import pytest

from builder.errors import TransientLLMError
from builder.llm.local import ManagedLlamaServer
from builder.llm.local.server import describe_exit
from builder.llm.local.supervised import LocalServerDiedError, SupervisedServerProvider
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest, ChatResponse
from schemas.trajectories import Message

pytestmark = pytest.mark.llama

ASK = ChatRequest((Message("user", "Name a color."),), temperature=0.0, max_tokens=4)


def _supervised(server: ManagedLlamaServer) -> SupervisedServerProvider:
    return SupervisedServerProvider(
        server, lambda url: OpenAIProvider(server.model, base_url=url, timeout=30)
    )


def _crash(server: ManagedLlamaServer) -> None:
    assert server.pid is not None
    os.kill(server.pid, signal.SIGSEGV)


def test_a_crashed_server_is_reported_restarted_once_and_the_request_answered(
    gguf_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gc.collect()  # sessions leaked by earlier tests report here, not in this test
    caplog.clear()
    with ManagedLlamaServer(gguf_path, n_ctx=2048) as server:
        provider = _supervised(server)
        first_url = provider.base_url

        async def scenario() -> None:  # one event loop: HTTP clients are bound to it
            assert (await provider.complete(ASK)).completions
            _crash(server)
            answer: ChatResponse = await provider.complete(ASK)
            assert answer.completions and answer.completions[0].text is not None
            assert provider.restarts == 1
            assert provider.base_url != first_url  # a fresh process on a new port
            _crash(server)
            with pytest.raises(
                LocalServerDiedError, match=r"SIGSEGV.*\n(.|\n)*already been restarted"
            ):
                await provider.complete(ASK)
            await provider.aclose()

        asyncio.run(scenario())
        gc.collect()  # aiohttp reports a session that was never closed when it is collected
        assert "Unclosed client session" not in caplog.text
        assert "SIGSEGV" in caplog.text and "restarting it once" in caplog.text
        assert "its log" in provider.deaths[0]


def test_a_transient_error_from_a_live_server_is_left_to_the_client_to_retry(
    gguf_path: Path,
) -> None:
    with ManagedLlamaServer(gguf_path, n_ctx=2048) as server:
        provider = SupervisedServerProvider(
            server,
            lambda url: OpenAIProvider(
                server.model, base_url=url.replace(str(server.port), "9"), timeout=5
            ),  # nothing listens there: connection refused
        )
        with pytest.raises(TransientLLMError, match=r"connection failed|timed out"):
            asyncio.run(provider.complete(ASK))
        assert provider.restarts == 0 and server.exited() is None


def test_exit_codes_read_as_signals_or_codes() -> None:
    assert describe_exit(-11) == "was killed by SIGSEGV (signal 11)"
    assert describe_exit(3) == "exited with code 3"
