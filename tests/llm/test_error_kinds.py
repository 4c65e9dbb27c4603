"""The error taxonomy reads every real body in its table, and every body the strict stand-ins
send, to the kind it means; unrelated errors mean nothing to it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from builder.llm.error_kinds import (
    CONTEXT,
    N_UNSUPPORTED,
    SAMPLING,
    TOOLS_REQUIRED,
    real_bodies,
    refusal_kind,
)
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message
from tests.llm.refusals import FLAVOURS, refuse
from tests.llm.servers import FakeAPIServer


@pytest.mark.parametrize("entry", real_bodies(), ids=lambda e: f"{e['service']}-{e['kind']}")
def test_every_real_body_of_the_table_is_read_as_its_kind(entry: dict[str, Any]) -> None:
    found = refusal_kind(entry["body"])
    assert found is not None and found.kind == entry["kind"]
    assert entry["source"] and entry["status"] in (400, 500)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_the_stand_ins_context_overflow_bodies_read_as_context_length(flavour: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 4000}], "max_tokens": 8}
    status, answer = refuse(flavour, body, 100) or (0, {})
    assert status == 400
    found = refusal_kind(answer)
    assert found is not None and found.kind == CONTEXT


def test_stand_in_refusals_of_parameters_and_tools_read_as_their_kinds() -> None:
    gpt5 = refuse("openai", {"model": "gpt-5", "messages": [], "temperature": 0.0}, None)
    assert gpt5 is not None and refusal_kind(gpt5[1]) is not None
    assert refusal_kind(gpt5[1]).kind == SAMPLING  # type: ignore[union-attr]
    many = refuse("llama-server", {"model": "m", "messages": [], "n": 4}, None)
    assert many is not None and refusal_kind(many[1]).kind == N_UNSUPPORTED  # type: ignore[union-attr]
    tool_use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    body = {"model": "claude-x", "max_tokens": 8, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [tool_use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
    ]}  # fmt: skip
    refused = refuse("anthropic", body, None)
    assert refused is not None and refusal_kind(refused[1]).kind == TOOLS_REQUIRED  # type: ignore[union-attr]
    assert refuse("anthropic", {**body, "tools": [{"name": "Bash"}]}, None) is None


def test_other_errors_mean_nothing_to_the_taxonomy() -> None:
    assert refusal_kind({"error": {"message": "Invalid API key", "type": "auth"}}) is None
    assert refusal_kind({"error": {"message": "server error", "code": 500}}) is None
    assert refusal_kind("<html>502 Bad Gateway</html>") is None


def test_eight_requests_in_flight_meeting_the_max_tokens_refusal_all_succeed() -> None:
    request = ChatRequest((Message("user", "hi"),), max_tokens=50)
    with FakeAPIServer(reject_max_tokens=True, latency_s=0.05) as server:
        provider = OpenAIProvider("mystery-model", base_url=server.base_url)

        async def eight() -> list[Any]:
            try:
                return await asyncio.gather(*(provider.complete(request) for _ in range(8)))
            finally:
                await provider.aclose()

        answers = asyncio.run(eight())
        assert len(answers) == 8 and all(len(a.completions) == 1 for a in answers)
        refused = [b for b in server.requests if "max_tokens" in b]
        assert 1 <= len(refused) <= 8  # every request in flight met it, none failed
        assert server.count == 8 + len(refused)
    assert provider.capabilities.max_tokens_param == "max_completion_tokens"


def test_llama_servers_refusal_of_n_is_met_by_one_request_per_sample() -> None:
    request = ChatRequest((Message("user", "hi"),), n=4, seed=7, max_tokens=16)
    with FakeAPIServer(flavour="llama-server") as server:
        provider = OpenAIProvider("m", base_url=server.base_url)

        async def twice() -> list[Any]:
            try:
                return [await provider.complete(request), await provider.complete(request)]
            finally:
                await provider.aclose()

        first, second = asyncio.run(twice())
        assert len(first.completions) == len(second.completions) == 4
        assert len(server.refused) == 1  # refused once, then never asked n > 1 again
        assert sorted(b.get("seed") for b in server.requests[1:5]) == [7, 8, 9, 10]
    assert provider.capabilities.n is False
