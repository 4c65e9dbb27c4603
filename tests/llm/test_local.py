"""The embedded Gemma 3 270M model: in-process provider and managed llama.cpp server (real).

The in-process tests run in a forked child (`tests.isolation.in_child`): llama.cpp runs in the
process that calls it, and a native crash there must fail one test, not take the run down."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from openai import OpenAI

from builder.errors import LLMError, PermanentLLMError
from builder.llm.cache import RequestCache
from builder.llm.chat_template import render
from builder.llm.client import LLMClient
from builder.llm.local import LocalProvider, ManagedLlamaServer
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatProvider, ChatRequest
from schemas.trajectories import Message
from tests.isolation import in_child

pytestmark = pytest.mark.llama

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["same", "different"]},
        "score": {"type": "integer"},
    },
    "required": ["verdict", "score"],
    "additionalProperties": False,
}
ASK_JSON = (Message("user", "Are `ls` and `ls -a` the same action? Answer as JSON."),)
ASK_COLOR = (Message("system", "Answer briefly."), Message("user", "Name a color."))


def assert_matches_schema(text: str) -> None:
    value = json.loads(text)
    assert set(value) == {"verdict", "score"}
    assert value["verdict"] in ("same", "different")
    assert isinstance(value["score"], int)


@pytest.fixture(scope="module")
def client(llama_server: ManagedLlamaServer) -> OpenAI:
    return OpenAI(base_url=llama_server.base_url, api_key="unused", max_retries=0)


# --- in-process -----------------------------------------------------------------------------


@in_child  # a native crash fails this test, not the whole run
def test_in_process_provider_returns_n_seeded_samples_and_reuses_the_prompt(
    gguf_path: Path,
) -> None:
    local = LocalProvider(gguf_path, n_ctx=4096)
    assert isinstance(local, ChatProvider)
    request = ChatRequest(ASK_COLOR, n=3, temperature=1.0, max_tokens=12, seed=11)
    response = asyncio.run(local.complete(request))
    texts = [c.text for c in response.completions]
    assert len(texts) == 3
    assert len(set(texts)) > 1  # seeds 11, 12, 13 sample differently
    assert all(c.finish_reason in ("stop", "length") for c in response.completions)
    prompt_tokens = response.usage.prompt_tokens // 3
    assert response.usage.prompt_tokens == 3 * prompt_tokens > 0
    assert 0 < response.usage.completion_tokens <= 3 * 12
    assert response.usage.cached_prompt_tokens >= 2 * (prompt_tokens - 1)  # samples 2 and 3
    assert local.load_seconds is not None

    again = asyncio.run(local.complete(request))
    assert [c.text for c in again.completions] == texts


@in_child  # a native crash fails this test, not the whole run
def test_in_process_json_schema_request_returns_json_matching_the_schema(
    gguf_path: Path,
) -> None:
    local = LocalProvider(gguf_path, n_ctx=4096)
    request = ChatRequest(ASK_JSON, n=2, temperature=1.0, max_tokens=48, seed=5, json_schema=SCHEMA)
    response = asyncio.run(local.complete(request))
    assert len(response.completions) == 2
    for completion in response.completions:
        assert completion.finish_reason == "stop"
        assert_matches_schema(completion.text)


@in_child  # a native crash fails this test, not the whole run
def test_in_process_provider_serves_concurrent_requests_one_at_a_time_without_mixing_them(
    gguf_path: Path,
) -> None:
    local = LocalProvider(gguf_path, n_ctx=4096)
    requests = [
        ChatRequest(ASK_COLOR, n=2, temperature=1.0, max_tokens=6, seed=seed) for seed in (40, 50)
    ]

    async def together() -> list[Any]:
        return list(await asyncio.gather(*(local.complete(r) for r in requests)))

    async def alone(request: ChatRequest) -> Any:
        return await local.complete(request)

    concurrent = asyncio.run(together())
    assert [len(r.completions) for r in concurrent] == [2, 2]
    for request, response in zip(requests, concurrent, strict=True):
        sequential = asyncio.run(alone(request))
        assert [c.text for c in response.completions] == [c.text for c in sequential.completions]


@in_child  # a native crash fails this test, not the whole run
def test_in_process_prompt_longer_than_the_context_fails_fast(gguf_path: Path) -> None:
    small = LocalProvider(gguf_path, n_ctx=128)
    request = ChatRequest((Message("user", "word " * 400),), max_tokens=4)
    with pytest.raises(PermanentLLMError, match="raise n_ctx"):
        asyncio.run(small.complete(request))
    small.close()


# --- managed server over HTTP ------------------------------------------------------------------


def test_server_answers_chat_over_http_with_the_project_chat_template(
    llama_server: ManagedLlamaServer, client: OpenAI, gguf_path: Path
) -> None:
    from llama_cpp import Llama

    assert llama_server.base_url.startswith("http://127.0.0.1:")
    messages: list[Any] = [{"role": m.role, "content": m.content} for m in ASK_COLOR]
    reply = client.chat.completions.create(
        model=llama_server.model,
        messages=messages,
        max_tokens=12,
        temperature=0.0,
    )
    assert reply.choices[0].message.content
    assert reply.choices[0].finish_reason in ("stop", "length")
    vocab = Llama(str(gguf_path), vocab_only=True, verbose=False)
    expected = vocab.tokenize(render(ASK_COLOR).encode(), special=True)
    assert reply.usage is not None
    # the same prompt as render() (so the system text was kept, unlike llama.cpp's "gemma")
    assert reply.usage.prompt_tokens == len(expected)


def test_server_gives_one_choice_per_request_so_samples_come_from_repeated_seeded_requests(
    llama_server: ManagedLlamaServer, client: OpenAI
) -> None:
    messages: list[Any] = [{"role": m.role, "content": m.content} for m in ASK_COLOR]

    def sample(seed: int, n: int = 1) -> list[str | None]:
        reply = client.chat.completions.create(
            model=llama_server.model,
            messages=messages,
            max_tokens=12,
            temperature=1.0,
            seed=seed,
            n=n,
        )
        return [choice.message.content for choice in reply.choices]

    assert len(sample(1, n=3)) == 1  # the server ignores n
    samples = [sample(seed)[0] for seed in (1, 2, 3)]
    assert len(set(samples)) > 1
    assert sample(2) == [samples[1]]  # seeded: a repeat gives the same sample


def test_server_json_object_with_schema_returns_json_matching_the_schema(
    llama_server: ManagedLlamaServer, client: OpenAI
) -> None:
    reply = client.chat.completions.create(
        model=llama_server.model,
        messages=[{"role": "user", "content": ASK_JSON[0].content}],
        max_tokens=48,
        seed=7,
        response_format=cast(Any, {"type": "json_object", "schema": SCHEMA}),
    )
    assert reply.choices[0].finish_reason == "stop"
    assert_matches_schema(reply.choices[0].message.content or "")


def test_server_returns_tool_call_blocks_as_openai_tool_calls(
    llama_server: ManagedLlamaServer, client: OpenAI, gguf_path: Path
) -> None:
    from llama_cpp import Llama

    tool = {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
    # a llama.cpp grammar makes the tiny model write a tool call in the template's text form
    grammar = (
        'root ::= "<tool_call>{\\"name\\": \\"bash\\", \\"arguments\\": '
        '{\\"command\\": \\"" [a-z ]{1,20} "\\"}}</tool_call>"'
    )
    ask = Message("user", "List the files.")
    reply = client.chat.completions.create(
        model=llama_server.model,
        messages=[{"role": "user", "content": ask.content}],
        tools=[cast(Any, tool)],
        max_tokens=48,
        seed=3,
        extra_body={"grammar": grammar},
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls: list[Any] = list(choice.message.tool_calls or [])
    assert [c.function.name for c in calls] == ["bash"]
    assert set(json.loads(calls[0].function.arguments)) == {"command"}
    vocab = Llama(str(gguf_path), vocab_only=True, verbose=False)
    expected = vocab.tokenize(render([ask], [tool]).encode(), special=True)
    assert reply.usage is not None and reply.usage.prompt_tokens == len(expected)  # tools shown


def test_server_that_cannot_load_its_model_fails_with_the_log_tail(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    server = ManagedLlamaServer(bogus, startup_timeout_s=60)
    with pytest.raises(LLMError, match="exited with code") as failure:
        server.start()
    assert f"Failed to load model from file: {bogus}" in str(failure.value)
    assert server.log_path is not None and str(server.log_path) in str(failure.value)
    assert server.log_path.exists()  # kept for the user to read
    server.log_path.unlink()


def test_server_is_stopped_when_its_context_exits(gguf_path: Path) -> None:
    with ManagedLlamaServer(gguf_path, n_ctx=512) as server:
        url = f"{server.base_url}/models"
        assert httpx.get(url).json()["data"][0]["id"] == server.model
        log = server.log_path
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2.0)
    assert log is not None and not log.exists()  # its temporary log is cleaned up


# --- the OpenAI provider and the request cache against the server, through a counting proxy ---


class CountingProxy:
    """A 127.0.0.1 HTTP proxy in front of the llama.cpp server that records each POST body."""

    def __init__(self, upstream: str) -> None:
        self.bodies: list[dict[str, Any]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.bodies.append(json.loads(body))
                answer = httpx.post(
                    upstream + self.path,
                    content=body,
                    timeout=120.0,
                    headers={"Content-Type": "application/json"},
                )
                self.send_response(answer.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def proxy(llama_server: ManagedLlamaServer) -> Iterator[CountingProxy]:
    upstream = llama_server.base_url.removesuffix("/v1")
    counting = CountingProxy(upstream)
    yield counting
    counting.close()


def provider_via(proxy: CountingProxy, llama_server: ManagedLlamaServer) -> OpenAIProvider:
    return OpenAIProvider(llama_server.model, base_url=proxy.url, api_key_env="NAP_TEST_NO_KEY")


def test_openai_provider_gets_n_samples_from_the_server_as_seeded_requests(
    proxy: CountingProxy, llama_server: ManagedLlamaServer
) -> None:
    provider = provider_via(proxy, llama_server)
    request = ChatRequest(ASK_COLOR, n=3, temperature=1.0, max_tokens=12, seed=21)
    response = asyncio.run(provider.complete(request))
    texts = [c.text for c in response.completions]
    assert len(texts) == 3
    assert len(set(texts)) > 1
    assert provider.capabilities.n is False
    assert proxy.bodies[0]["n"] == 3  # asked once; the server answered with one choice
    assert sorted(body["seed"] for body in proxy.bodies) == [21, 22, 23]  # the rest fanned out
    assert response.usage.completion_tokens > 0
    assert response.usage.prompt_tokens == 3 * (response.usage.prompt_tokens // 3) > 0


def test_openai_provider_json_schema_request_returns_json_matching_the_schema(
    proxy: CountingProxy, llama_server: ManagedLlamaServer
) -> None:
    provider = provider_via(proxy, llama_server)
    request = ChatRequest(ASK_JSON, n=1, temperature=1.0, max_tokens=48, seed=9, json_schema=SCHEMA)
    response = asyncio.run(provider.complete(request))
    assert_matches_schema(response.completions[0].text)
    assert provider.capabilities.response_format == "json_object"  # llama.cpp's dialect
    assert proxy.bodies[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_second_identical_call_is_served_from_the_cache_and_never_reaches_the_server(
    proxy: CountingProxy, llama_server: ManagedLlamaServer, tmp_path: Path
) -> None:
    request = ChatRequest(ASK_COLOR, n=2, temperature=1.0, max_tokens=12, seed=31)
    cache_file = tmp_path / "requests.sqlite"

    async def run_twice() -> tuple[Any, Any, LLMClient]:
        client = LLMClient(provider_via(proxy, llama_server), cache=RequestCache(cache_file))
        first = await client.complete(request, stage="teacher")
        sent = len(proxy.bodies)
        second = await client.complete(request, stage="teacher")
        assert len(proxy.bodies) == sent
        return first, second, client

    first, second, client = asyncio.run(run_twice())
    assert len(proxy.bodies) == 2  # the first call: one request per sample
    assert not first.cached and second.cached
    assert [c.text for c in second.completions] == [c.text for c in first.completions]
    assert client.usage.stage("teacher").cache_hits == 1
    assert client.cache is not None
    client.cache.close()  # as the first run ends

    async def rerun() -> Any:  # a new run (new client, provider, cache handle) on the same file
        fresh = LLMClient(provider_via(proxy, llama_server), cache=RequestCache(cache_file))
        return await fresh.complete(request, stage="teacher")

    again = asyncio.run(rerun())
    assert len(proxy.bodies) == 2
    assert [c.text for c in again.completions] == [c.text for c in first.completions]
