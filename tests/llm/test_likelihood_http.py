"""The vLLM and SGLang likelihood providers against the stand-in in their documented shapes."""

from __future__ import annotations

import asyncio

import pytest

from builder.errors import PermanentLLMError
from builder.llm import likelihood_http
from builder.llm.likelihood import Continuation, ScoreRequest, ScoreResponse
from builder.llm.likelihood_http import SGLangLikelihood, VLLMLikelihood
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer
from tests.runner.logprob_server import KEPT_LOGPROB, LOST_LOGPROB, LogprobServer

REPLY = "THOUGHT: read it\n\n```bash\nsed -n 1,9p a.py\n```"
ACTION = "sed -n 1,9p a.py"
CONTINUATION = Continuation(REPLY, (REPLY.index(ACTION), REPLY.index(ACTION) + len(ACTION)))


def request(observation: str) -> ScoreRequest:
    messages = (
        Message("system", "You are an agent."),
        Message("user", "Fix the bug in a.py"),
        Message("assistant", "THOUGHT: look\n\n```bash\nls\n```"),
        Message("user", observation),
    )
    return ScoreRequest(messages, None, (CONTINUATION, Continuation(ACTION, (0, len(ACTION)))))


@pytest.mark.parametrize("kind", [VLLMLikelihood, SGLangLikelihood])
def test_span_tokens_and_their_logprobs_come_back_per_continuation(kind: type) -> None:
    with LogprobServer() as server:
        provider = kind("m", base_url=server.base_url)

        async def both() -> tuple[ScoreResponse, ScoreResponse]:
            kept = await provider.score(request("a.py\nb.py"))
            lost = await provider.score(request("[output compressed: summary] files"))
            await provider.aclose()
            return kept, lost

        kept, lost = asyncio.run(both())
    for response, value in ((kept, KEPT_LOGPROB), (lost, LOST_LOGPROB)):
        assert len(response.tokens) == 2
        for tokens in response.tokens:
            assert "".join(t.text for t in tokens) == ACTION
            assert {t.logprob for t in tokens} == {value}
        assert response.prompt_tokens > 0


def test_sglang_repeats_from_token_zero_when_the_tail_misses_the_action(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(likelihood_http, "CHARS_PER_TOKEN_BOUND", 1)  # start far too late
    with LogprobServer() as server:
        provider = SGLangLikelihood("m", base_url=server.base_url)
        response = asyncio.run(provider.score(request("a.py")))
        starts = [b["logprob_start_len"] for b in server.requests]
    assert starts[0] > 0 and starts[-1] == 0 and len(starts) == 2
    assert "".join(t.text for t in response.tokens[0]) == ACTION


@pytest.mark.parametrize("kind", [VLLMLikelihood, SGLangLikelihood])
def test_a_server_without_prompt_logprobs_is_a_clear_permanent_error(kind: type) -> None:
    with FakeAPIServer(api="openai") as server:
        provider = kind("m", base_url=server.base_url)
        with pytest.raises(PermanentLLMError, match=r"gate\.likelihood_api"):
            asyncio.run(provider.score(request("a.py")))
