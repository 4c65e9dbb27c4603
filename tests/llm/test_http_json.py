"""The direct transport's own behaviour: proxies from the environment, bodies as given."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl

import pytest

from builder.errors import TransientLLMError
from builder.llm.http_json import JsonHTTP, env_proxy
from tests.llm.servers import FakeAPIServer


def _client(base_url: str) -> JsonHTTP:
    return JsonHTTP(
        base_url,
        {"Authorization": "Bearer sk-x"},
        timeout_s=5,
        max_connections=4,
        tls=ssl.create_default_context(),
        label="test",
        key_env="NAP_NO_SUCH_KEY",
    )


def test_the_environment_names_the_proxy_and_no_proxy_exempts_hosts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert env_proxy("https://api.openai.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain.internal:8080")
    assert env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"
    assert env_proxy("http://vllm.internal:8000/v1") == "http://plain.internal:8080"
    monkeypatch.setenv("NO_PROXY", "vllm.internal,.corp")
    assert env_proxy("http://vllm.internal:8000/v1") is None
    assert env_proxy("http://gpu1.corp:8000/v1") is None
    assert env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"


def test_requests_go_through_the_environments_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy that is down makes the request fail as a connection error, though the
    endpoint itself is up: the request really went to the proxy."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with FakeAPIServer() as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = asyncio.run(_post_once(_client(server.base_url), body))
        assert reply["choices"] and server.count == 1
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        with pytest.raises(TransientLLMError, match="connection failed"):
            asyncio.run(_post_once(_client(server.base_url), body))
        assert server.count == 1


def test_an_encoded_body_is_sent_byte_for_byte() -> None:
    data = json.dumps({"model": "m", "messages": [{"role": "user", "content": "é"}]}).encode()
    with FakeAPIServer() as server:
        asyncio.run(_post_once(_client(server.base_url), data))
        assert server.requests[0]["messages"][0]["content"] == "é"


async def _post_once(client: JsonHTTP, body: object) -> dict:  # type: ignore[type-arg]
    try:
        return await client.post("/chat/completions", body)  # type: ignore[arg-type]
    finally:
        await client.aclose()
