"""The vLLM and SGLang likelihood providers against the stand-in in their documented shapes."""

from __future__ import annotations

import asyncio

import pytest

from builder.errors import BudgetExceededError, PermanentLLMError, TransientLLMError
from builder.llm import scoring_http
from builder.llm.budget import Budget
from builder.llm.limits import EndpointLimits, RateLimiter, RetryPolicy
from builder.llm.protocol import Usage
from builder.llm.scoring import Continuation, Scorer, ScoreRequest, ScoreResponse
from builder.llm.scoring_http import SGLangLikelihood, VLLMLikelihood
from builder.llm.usage import ModelPrice, UsageLedger
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer
from tests.run.logprob_server import KEPT_LOGPROB, LOST_LOGPROB, LogprobServer

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
    monkeypatch.setattr(scoring_http, "CHARS_PER_TOKEN_BOUND", 1)  # start far too late
    with LogprobServer() as server:
        provider = SGLangLikelihood("m", base_url=server.base_url)
        response = asyncio.run(provider.score(request("a.py")))
        starts = [b["logprob_start_len"] for b in server.requests]
        monkeypatch.undo()
        once = asyncio.run(SGLangLikelihood("m", base_url=server.base_url).score(request("a.py")))
    assert starts[0] > 0 and starts[-1] == 0 and len(starts) == 2
    assert "".join(t.text for t in response.tokens[0]) == ACTION
    # both calls are billed, so both are counted
    assert once.completion_tokens == 2
    assert (response.prompt_tokens, response.completion_tokens) == (2 * once.prompt_tokens, 4)


@pytest.mark.parametrize("kind", [VLLMLikelihood, SGLangLikelihood])
def test_a_server_without_prompt_logprobs_is_a_clear_permanent_error(kind: type) -> None:
    with FakeAPIServer(api="openai") as server:
        provider = kind("m", base_url=server.base_url)
        with pytest.raises(PermanentLLMError, match=r"gate\.likelihood_api"):
            asyncio.run(provider.score(request("a.py")))


@pytest.mark.parametrize("kind", [VLLMLikelihood, SGLangLikelihood])
def test_scored_requests_keep_the_budget_the_limits_and_the_books(
    kind: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Likelihood requests are paid like chat ones on a priced endpoint: each reserves its
    worst case once it holds a slot, settles at the server's token counts, and is booked in
    the run's usage; once the next one could pass the limit, none is sent. The RPM limiter
    counts exactly the HTTP requests the server sees (vLLM's /tokenize calls too)."""
    price = ModelPrice(input=2000.0, output=4000.0)  # USD per million tokens
    budget = Budget(max_usd=0.5)
    usage = UsageLedger()
    limits = EndpointLimits(max_in_flight=2, rpm=10_000)
    drawn: list[float] = []
    real_acquire = RateLimiter.acquire

    async def counted(self: RateLimiter, amount: float = 1.0) -> None:
        if self is limits.requests:
            drawn.append(amount)
        await real_acquire(self, amount)

    monkeypatch.setattr(RateLimiter, "acquire", counted)
    observations = [f"file{i:02d}.py\n" * 4 for i in range(40)]
    with LogprobServer() as server:
        provider = kind("m", base_url=server.base_url)
        scorer = Scorer(
            provider,
            limits=limits,
            budget=budget,
            price=price,
            usage=usage,
        )

        async def every() -> list[object]:
            jobs = [scorer.score(request(o)) for o in observations]
            results = await asyncio.gather(*jobs, return_exceptions=True)
            await provider.aclose()
            return results

        results = asyncio.run(every())
        seen = list(server.requests)
        scored_calls = [b for b in seen if "prompt" in b or "text" in b]
    refused = [r for r in results if isinstance(r, BudgetExceededError)]
    answered = [r for r in results if isinstance(r, ScoreResponse)]
    assert refused and answered and len(refused) + len(answered) == len(observations)
    booked = usage.stages["likelihood"]
    assert booked.requests == len(answered) == scorer.requests
    assert booked.prompt_tokens == sum(r.prompt_tokens for r in answered) > 0
    assert booked.completion_tokens == 2 * len(answered)  # one decoded token per continuation
    expected = price.cost(Usage(booked.prompt_tokens, booked.completion_tokens))
    assert booked.cost_usd == pytest.approx(expected) == pytest.approx(budget.spent_usd)
    assert budget.spent_usd <= 0.5 and budget.reserved_usd == 0.0
    assert budget.peak_reserved_usd <= 2 * budget.largest_reservation_usd + 1e-12
    if kind is VLLMLikelihood:  # /tokenize calls are free: only /completions is scored
        scored_calls = [b for b in scored_calls if "prompt_logprobs" in b]
    assert len(scored_calls) == len(answered)  # a refused request sent nothing
    per_request = 2 + 2 if kind is VLLMLikelihood else 1  # two continuations in `request`
    assert booked.http_requests == len(seen) == per_request * len(answered)
    # the budget refuses before anything is drawn: the limiter counted what the server saw
    assert sum(drawn) == len(seen)


def test_a_scoring_request_has_one_total_deadline_over_all_its_calls() -> None:
    """vLLM scores in four calls here (/tokenize of the context and of each reply, then
    /completions), each well within any per-call timeout; the request as a whole must still
    end at `limits.timeout_s`, and leave its slot and its reservation behind."""
    price = ModelPrice(input=1.0, output=1.0)
    budget = Budget(max_usd=10.0)
    usage = UsageLedger()
    limits = EndpointLimits(max_in_flight=1)

    async def no_wait(_: float) -> None:
        return None

    with LogprobServer(latency_s=0.15) as server:
        provider = VLLMLikelihood("m", base_url=server.base_url)
        scorer = Scorer(
            provider,
            limits=limits,
            retry=RetryPolicy(max_attempts=2, sleep=no_wait),
            budget=budget,
            price=price,
            usage=usage,
            deadline_s=0.35,
        )

        async def once() -> None:
            try:
                await scorer.score(request("a.py\nb.py"))
            finally:
                await provider.aclose()

        with pytest.raises(TransientLLMError, match=r"deadline of 0\.35 s") as caught:
            asyncio.run(once())
        seen = list(server.requests)
    assert caught.value.kind == "timeout"
    assert 2 <= len(seen) < 2 * 4  # each attempt was cut before its last call
    booked = usage.stages["likelihood"]
    assert booked.errors["timeout"] == 2 and booked.requests == 0
    assert limits.in_flight == 0 and budget.reserved_usd == 0.0
