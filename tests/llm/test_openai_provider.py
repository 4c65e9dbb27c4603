"""OpenAIProvider against a real local OpenAI-compatible server: wire shape and adaptation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from builder.errors import ConfigError, TransientLLMError
from builder.llm.openai_provider import PLACEHOLDER_KEY, TRANSPORTS, OpenAIProvider
from builder.llm.protocol import ChatRequest, ChatResponse
from builder.teacher.prompt import COMPRESSOR_SCHEMA
from schemas.trajectories import Message, ToolCall
from tests.llm.servers import FakeAPIServer, Fault, status

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
TOOLS = (
    {
        "type": "function",
        "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}},
    },
)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-provider")


def complete(provider: OpenAIProvider, request: ChatRequest) -> ChatResponse:
    return asyncio.run(provider.complete(request))


def complete_twice(provider: OpenAIProvider, request: ChatRequest) -> list[ChatResponse]:
    """Two calls in sequence on one event loop (the SDK's connections belong to a loop)."""

    async def twice() -> list[ChatResponse]:
        return [await provider.complete(request), await provider.complete(request)]

    return asyncio.run(twice())


def test_messages_are_sent_in_openai_shape_with_content_parts_as_is() -> None:
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    messages = (
        Message("system", "Be terse.", is_demo=True),
        Message("user", "look", content_parts=json.dumps(parts), name="ana"),
        Message("assistant", "", tool_calls=[ToolCall("c1", "bash", '{"cmd": "ls"}')]),
        Message("tool", "a.py", tool_call_id="c1", name="bash"),
    )
    request = ChatRequest(
        messages, tools=TOOLS, temperature=0.3, top_p=0.9, max_tokens=50, seed=4, stop=("END",)
    )
    with FakeAPIServer() as server:
        complete(OpenAIProvider("gpt-test", base_url=server.base_url), request)
        sent = server.requests[0]
    assert sent["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": parts, "name": "ana"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                }
            ],
        },
        {"role": "tool", "content": "a.py", "tool_call_id": "c1"},
    ]
    assert sent["tools"] == list(TOOLS)
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.3, 0.9, 50)
    assert (sent["seed"], sent["stop"], sent["model"]) == (4, ["END"], "gpt-test")
    assert "n" not in sent and "response_format" not in sent


def test_choices_tool_calls_and_usage_are_mapped() -> None:
    def reply(body: dict[str, Any], index: int, number: int) -> dict[str, Any]:
        call = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"cmd": "pwd"}'},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    request = ChatRequest((Message("user", "x" * 40),), tools=TOOLS, n=2)
    with FakeAPIServer(text=reply) as server:
        response = complete(OpenAIProvider("gpt-test", base_url=server.base_url), request)
        assert server.count == 1 and server.requests[0]["n"] == 2
    assert [c.tool_calls for c in response.completions] == [
        (ToolCall("call_0", "bash", '{"cmd": "pwd"}'),),
        (ToolCall("call_1", "bash", '{"cmd": "pwd"}'),),
    ]
    assert [c.finish_reason for c in response.completions] == ["tool_calls", "tool_calls"]
    assert (response.usage.prompt_tokens, response.usage.cached_prompt_tokens) == (10, 5)
    assert response.usage.completion_tokens == 6


def test_a_server_that_ignores_n_gets_one_seeded_request_per_sample() -> None:
    request = ChatRequest((Message("user", "hi"),), n=3, seed=10)
    with FakeAPIServer(honour_n=False) as server:
        provider = OpenAIProvider("gemma", base_url=server.base_url)
        first, second = complete_twice(provider, request)
        assert server.count == 6
        # the samples after the first go out concurrently: their arrival order is free
        first_call = [r.get("seed") for r in server.requests[:3]]
        assert first_call[0] == 10 and sorted(first_call) == [10, 11, 12]
        assert sorted(r.get("seed") for r in server.requests[3:]) == [10, 11, 12]
        assert all("n" not in r for r in server.requests[3:])
    assert provider.capabilities.n is False
    # one completion per seeded request; which request number got which seed is arrival order
    texts = [c.text for c in first.completions]
    assert sorted(t.split(" seed=")[1] for t in texts) == ["10", "11", "12"]
    assert sorted(t.split(" seed=")[0] for t in texts) == ["reply 1.0", "reply 2.0", "reply 3.0"]
    assert len(second.completions) == 3


def test_a_reply_with_no_choices_is_retried_as_such_without_switching_modes() -> None:
    request = ChatRequest((Message("user", "hi"),), n=3)
    with FakeAPIServer(faults=[Fault("no_choices")]) as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)

        async def twice() -> tuple[TransientLLMError, bool | None, ChatResponse]:
            with pytest.raises(TransientLLMError, match="0 choices for n=3") as caught:
                await provider.complete(request)
            seen = provider.capabilities.n
            return caught.value, seen, await provider.complete(request)

        error, seen, response = asyncio.run(twice())
        assert error.kind == "few_choices"
        assert seen is None  # not "ignores n" for the rest of the run
        assert server.count == 2 and server.requests[1]["n"] == 3
    assert len(response.completions) == 3 and provider.capabilities.n is True


def test_a_server_that_honours_n_is_recorded_as_such() -> None:
    with FakeAPIServer() as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)
        response = complete(provider, ChatRequest((Message("user", "hi"),), n=4))
        assert server.count == 1
    assert provider.capabilities.n is True
    assert len({c.text for c in response.completions}) == 4


def test_json_schema_is_asked_first_and_recorded_when_accepted() -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=SCHEMA)
    with FakeAPIServer(text=lambda body, i, n: '{"ok": true}') as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)
        response = complete(provider, request)
        assert server.requests[0]["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": SCHEMA},
        }
    assert provider.capabilities.response_format == "json_schema"
    assert json.loads(response.completions[0].text) == {"ok": True}


STRICT = {
    "type": "object",
    "properties": {"ok": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
    "required": ["ok"],
    "additionalProperties": False,
}


def test_a_strict_compatible_schema_is_sent_strict_and_that_is_recorded() -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=STRICT)
    with FakeAPIServer(text=lambda body, i, n: '{"ok": true}') as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)
        complete(provider, request)
        assert server.requests[0]["response_format"]["json_schema"]["strict"] is True
    assert provider.capabilities.response_format == "json_schema_strict"


def test_a_server_refusing_strict_gets_plain_json_schema_from_then_on() -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=STRICT)
    with FakeAPIServer(reject_strict=400) as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)
        complete_twice(provider, request)
        sent = [r["response_format"]["json_schema"].get("strict") for r in server.requests]
        assert sent == [True, None, None]
    assert provider.capabilities.response_format == "json_schema"


def test_the_compressor_schema_is_strict_compatible() -> None:
    from builder.llm.openai_provider import is_strict_compatible
    from builder.teacher.prompt import COMPRESSOR_SCHEMA

    assert is_strict_compatible(COMPRESSOR_SCHEMA)
    assert not is_strict_compatible(SCHEMA)  # no additionalProperties: false


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_model_that_rejects_max_tokens_gets_max_completion_tokens_from_then_on(
    transport: str,
) -> None:
    request = ChatRequest((Message("user", "hi"),), max_tokens=50)
    with FakeAPIServer(reject_max_tokens=True) as server:
        provider = OpenAIProvider("mystery-model", base_url=server.base_url, transport=transport)
        complete_twice(provider, request)
        assert ["max_tokens" in r for r in server.requests] == [True, False, False]
        assert server.requests[2]["max_completion_tokens"] == 50
    assert provider.capabilities.max_tokens_param == "max_completion_tokens"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_insufficient_quota_stops_instead_of_waiting(transport: str) -> None:
    from builder.errors import QuotaExceededError

    body = json.dumps(
        {
            "error": {
                "message": "You exceeded your current quota",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        }
    )
    with FakeAPIServer(faults=[status(429, body, retry_after="20")]) as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url, transport=transport)
        with pytest.raises(QuotaExceededError, match="no quota or credit left"):
            complete(provider, ChatRequest((Message("user", "hi"),)))
        assert server.count == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("refusal", [422, 400, 500])
def test_a_server_that_rejects_json_schema_gets_json_object_with_the_schema(
    refusal: int, transport: str
) -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=SCHEMA)
    with FakeAPIServer(reject_json_schema=refusal) as server:
        provider = OpenAIProvider("gemma", base_url=server.base_url, transport=transport)
        complete_twice(provider, request)  # the fallback is remembered: one request the 2nd time
        assert [r["response_format"]["type"] for r in server.requests] == [
            "json_schema",
            "json_object",
            "json_object",
        ]
        assert server.requests[2]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert provider.capabilities.response_format == "json_object"


def test_the_compressor_schema_root_union_goes_only_to_llama_cpp_json_object() -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=COMPRESSOR_SCHEMA)
    with FakeAPIServer(reject_json_schema=422) as server:
        provider = OpenAIProvider("gemma", base_url=server.base_url)
        complete(provider, request)
        strict, json_schema, json_object = (r["response_format"] for r in server.requests)
    assert strict["json_schema"]["strict"] is True and "strict" not in json_schema["json_schema"]
    for refused in (strict, json_schema):
        sent = refused["json_schema"]["schema"]
        assert "anyOf" not in sent and sent["properties"] == COMPRESSOR_SCHEMA["properties"]
    assert json_object == {"type": "json_object", "schema": COMPRESSOR_SCHEMA}
    assert len(COMPRESSOR_SCHEMA["anyOf"]) == 3


def test_when_the_fallback_fails_too_the_first_error_stands_and_nothing_is_remembered() -> None:
    request = ChatRequest((Message("user", "ok?"),), json_schema=SCHEMA)
    with FakeAPIServer(faults=[status(503), status(400)]) as server:
        provider = OpenAIProvider("gpt-test", base_url=server.base_url)
        with pytest.raises(TransientLLMError, match="HTTP 503"):
            complete(provider, request)
        assert provider.capabilities.response_format is None
        complete(OpenAIProvider("gpt-test", base_url=server.base_url), request)
        assert server.requests[-1]["response_format"]["type"] == "json_schema"


def test_openai_itself_needs_a_key_but_a_self_hosted_server_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="set OPENAI_API_KEY"):
        OpenAIProvider("gpt-4o")
    with FakeAPIServer() as server:
        complete(
            OpenAIProvider("m", base_url=server.base_url), ChatRequest((Message("user", "a"),))
        )
        assert server.headers[0]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


def test_content_lists_fall_back_to_strings_for_servers_that_refuse_them() -> None:
    parts = '[{"type": "text", "text": "be brief"}]'
    request = ChatRequest(
        (Message("system", "be brief", content_parts=parts), Message("user", "hi")), n=1
    )

    with FakeAPIServer(faults=[status(500, "Input should be a valid string")]) as server:
        provider = OpenAIProvider("gemma", base_url=server.base_url)
        first, second = complete_twice(provider, request)
        sent = [r["messages"][0]["content"] for r in server.requests]
    assert sent == [[{"type": "text", "text": "be brief"}], "be brief", "be brief"]
    assert provider.capabilities.content_parts is False
    assert first.completions[0].text and second.completions[0].text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_transport_sends_the_key_organisation_and_project_as_the_sdk_does(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAP_TEST_KEY", "sk-header-check")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-456")
    with FakeAPIServer() as server:
        provider = OpenAIProvider(
            "m", base_url=server.base_url, api_key_env="NAP_TEST_KEY", transport=transport
        )
        complete(provider, ChatRequest((Message("user", "a"),)))
        (headers,) = server.headers
    assert headers["authorization"] == "Bearer sk-header-check"
    assert headers["openai-organization"] == "org-123"
    assert headers["openai-project"] == "proj-456"
    assert headers["content-type"] == "application/json"


def test_an_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown transport 'curl'"):
        OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", transport="curl")
