"""AnthropicProvider against a local server speaking the Messages API shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from builder.errors import ConfigError, PermanentLLMError, TransientLLMError
from builder.llm.anthropic_provider import AnthropicProvider
from builder.llm.protocol import ChatRequest, ChatResponse
from builder.teacher.prompt import COMPRESSOR_SCHEMA
from schemas.trajectories import Message, ToolCall
from tests.llm.servers import FakeAPIServer, status

TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    },
)
CONVERSATION = (
    Message("system", "You are an agent."),
    Message("user", "Fix the bug."),
    Message(
        "assistant",
        "Looking.",
        tool_calls=[
            ToolCall("t1", "bash", '{"cmd": "ls"}'),
            ToolCall("t2", "bash", '{"cmd": "pwd"}'),
        ],
    ),
    Message("tool", "a.py b.py", tool_call_id="t1"),
    Message("tool", "/repo", tool_call_id="t2"),
    Message("user", "Go on."),
)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def complete(server: FakeAPIServer, request: ChatRequest) -> ChatResponse:
    provider = AnthropicProvider("claude-test", base_url=server.base_url, timeout=5)
    return asyncio.run(provider.complete(request))


def test_the_request_separates_system_maps_tools_and_merges_tool_results() -> None:
    request = ChatRequest(CONVERSATION, tools=TOOLS, temperature=0.2, max_tokens=64, stop=("X",))
    with FakeAPIServer(api="anthropic") as server:
        complete(server, request)
        sent, headers = server.requests[0], server.headers[0]
    assert sent == {
        "model": "claude-test",
        "max_tokens": 64,
        "temperature": 0.2,
        "stop_sequences": ["X"],
        "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [
            {
                "name": "bash",
                "description": "Run a command.",
                "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            }
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}},
                    {"type": "tool_use", "id": "t2", "name": "bash", "input": {"cmd": "pwd"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "a.py b.py"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "/repo"},
                    {"type": "text", "text": "Go on."},
                ],
            },
        ],
    }
    sent_key = headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")
    assert sent_key == "sk-ant-test"  # the SDK version decides which header carries it
    assert headers["anthropic-version"]


@pytest.mark.parametrize(
    ("prefix", "where"),
    [(1, ("system", 0)), (2, (0, 0)), (3, (1, 2)), (4, (2, 0)), (5, (2, 1)), (6, (2, 2))],
)
def test_cache_control_marks_the_last_block_of_the_shared_prefix(
    prefix: int, where: tuple[Any, int]
) -> None:
    with FakeAPIServer(api="anthropic") as server:
        complete(server, ChatRequest(CONVERSATION, tools=TOOLS, cache_prefix=prefix))
        sent = server.requests[0]
    places: list[tuple[Any, list[dict[str, Any]]]] = [("system", sent["system"])]
    places += [(i, turn["content"]) for i, turn in enumerate(sent["messages"])]
    marked = [
        ((name, i), block["cache_control"])
        for name, blocks in places
        for i, block in enumerate(blocks)
        if "cache_control" in block
    ]
    assert marked == [(where, {"type": "ephemeral"})]


def test_n_samples_are_parallel_requests_and_usage_adds_up_with_cache_reads() -> None:
    usage = {
        "input_tokens": 20,
        "output_tokens": 7,
        "cache_read_input_tokens": 300,
        "cache_creation_input_tokens": 50,
    }
    with FakeAPIServer(api="anthropic", anthropic_usage=usage) as server:
        response = complete(server, ChatRequest(CONVERSATION, tools=TOOLS, n=3))
        assert server.count == 3
    assert sorted(c.text for c in response.completions) == ["reply 1", "reply 2", "reply 3"]
    assert (response.usage.prompt_tokens, response.usage.cached_prompt_tokens) == (3 * 370, 900)
    assert response.usage.completion_tokens == 21
    assert response.usage.cache_write_tokens == 150  # 5-minute writes, priced apart
    assert {c.finish_reason for c in response.completions} == {"end_turn"}


def test_teacher_fan_out_caches_the_whole_prompt_and_sends_one_request_first() -> None:
    """n samples of one prompt and no cache_prefix (the teacher's): the first request writes
    the whole prompt to the cache, the rest read it."""
    prompt = (Message("system", "Compress."), Message("user", "the output"))
    with FakeAPIServer(api="anthropic", latency_s=0.05) as server:
        complete(server, ChatRequest(prompt, n=4))
        first_end = server.intervals[0][1]
        assert min(a for a, _ in server.intervals[1:]) >= first_end
        assert all(r["messages"][-1]["content"][-1].get("cache_control") for r in server.requests)


def test_cache_writes_bill_at_their_ttl_rate_and_reads_at_the_cached_rate() -> None:
    from builder.llm.anthropic_provider import to_usage
    from builder.llm.usage import ModelPrice

    usage = to_usage(
        {
            "input_tokens": 100,
            "output_tokens": 10,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 600,
            "cache_creation": {"ephemeral_5m_input_tokens": 400, "ephemeral_1h_input_tokens": 200},
        }
    )
    assert (usage.prompt_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        1700,
        400,
        200,
    )
    parts = ModelPrice(input=3.0, output=15.0, cached_input=0.3).parts(usage)
    assert parts == pytest.approx(
        {
            "uncached": 100 * 3.0 / 1e6,
            "cache_read": 1000 * 0.3 / 1e6,
            "cache_write": (400 * 3.75 + 200 * 6.0) / 1e6,
            "output": 10 * 15.0 / 1e6,
        }
    )


def test_with_a_cache_breakpoint_the_first_sample_writes_the_cache_before_the_others_go() -> None:
    with FakeAPIServer(api="anthropic", latency_s=0.05) as server:
        complete(server, ChatRequest(CONVERSATION, tools=TOOLS, n=3, cache_prefix=5))
        first_end = server.intervals[0][1]
        assert sorted(a for a, _ in server.intervals[1:])[0] >= first_end
        assert server.peak_in_flight == 2  # the other two together
        assert all("cache_control" in r["messages"][2]["content"][1] for r in server.requests)


def test_tool_use_blocks_become_tool_calls() -> None:
    def content(body: dict[str, Any], number: int) -> list[dict[str, Any]]:
        return [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "cat a.py"}},
        ]

    with FakeAPIServer(api="anthropic", anthropic_content=content) as server:
        (completion,) = complete(server, ChatRequest(CONVERSATION, tools=TOOLS)).completions
    assert completion.text == "Let me look."
    assert completion.tool_calls == (ToolCall("toolu_1", "bash", '{"cmd": "cat a.py"}'),)
    assert completion.finish_reason == "tool_use"


def test_structured_output_is_a_forced_tool_whose_input_is_the_text() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    def content(body: dict[str, Any], number: int) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "id": "toolu_9", "name": "respond", "input": {"ok": True}}]

    with FakeAPIServer(api="anthropic", anthropic_content=content) as server:
        response = complete(server, ChatRequest(CONVERSATION[:2], json_schema=schema))
        sent = server.requests[0]
    assert sent["tool_choice"] == {"type": "tool", "name": "respond"}
    assert sent["tools"][-1]["input_schema"] == schema
    assert json.loads(response.completions[0].text) == {"ok": True}
    assert response.completions[0].tool_calls == ()


def test_the_forced_tool_gets_no_composition_at_its_root() -> None:
    def content(body: dict[str, Any], number: int) -> list[dict[str, Any]]:
        answer = {"type": "unchanged"}
        return [{"type": "tool_use", "id": "toolu_1", "name": "respond", "input": answer}]

    request = ChatRequest(CONVERSATION[:2], json_schema=COMPRESSOR_SCHEMA)
    with FakeAPIServer(api="anthropic", anthropic_content=content) as server:
        complete(server, request)
        sent = server.requests[0]["tools"][-1]["input_schema"]
    assert sent["type"] == "object" and not {"anyOf", "oneOf", "allOf"} & set(sent)
    assert sent["properties"] == COMPRESSOR_SCHEMA["properties"]


@pytest.mark.parametrize("code", [429, 529])
def test_rate_limits_and_overload_are_transient_with_retry_after(code: int) -> None:
    with FakeAPIServer(api="anthropic", faults=[status(code, retry_after="2")]) as server:
        with pytest.raises(TransientLLMError) as info:
            complete(server, ChatRequest(CONVERSATION[:2]))
        assert server.count == 1
    assert info.value.retry_after == 2.0


def test_auth_failure_says_to_set_the_anthropic_key() -> None:
    with (
        FakeAPIServer(api="anthropic", faults=[status(401)]) as server,
        pytest.raises(PermanentLLMError, match="set ANTHROPIC_API_KEY"),
    ):
        complete(server, ChatRequest(CONVERSATION[:2]))


def test_the_key_comes_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="set ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-test")
