"""Prompt log-probabilities: the small protocol the likelihood gate needs, beside chat.

A `ScoreRequest` is a context (messages, tools) plus continuations, each an assistant turn as
the agent would write it with the character span of its action. A `LikelihoodProvider` returns,
per continuation, the log-probability of every token overlapping that span, given the context
and the continuation's earlier tokens (teacher forcing: one prefill, nothing decoded).

The context becomes text with `builder.llm.chat_template.render` (the open assistant turn it
ends with is where the continuation goes), for every backend, so all of them score the same
string. `Scorer` wraps a provider with the endpoint's limits and retries; it is deliberately
separate from `LLMClient` (no request cache: a prefill is cheap to redo). It passes the same
`Gate` as chat requests, though: a scored request reserves its worst case in the output
folder's budget once it holds its slot, settles at the reported tokens and has the total
deadline of `limits.timeout_s`, and its usage and cost go to the run's ledger (stage
`likelihood`), so a budget holds in this mode too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from builder.errors import TransientLLMError
from builder.llm.admission import CHARS_PER_TOKEN_WORST, Estimate, Gate, through_gates
from builder.llm.budget import Budget
from builder.llm.chat_template import render
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.protocol import Usage
from builder.llm.usage import ModelPrice, UsageLedger
from schemas.trajectories import Message


@dataclass(frozen=True)
class Continuation:
    """An assistant turn `text`; `span` = (start, end) characters of the action inside it."""

    text: str
    span: tuple[int, int]


@dataclass(frozen=True)
class TokenLogprob:
    text: str
    logprob: float


@dataclass(frozen=True)
class ScoreRequest:
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] | None
    continuations: tuple[Continuation, ...]


@dataclass(frozen=True)
class ScoreResponse:
    """Per continuation, the tokens overlapping its span with their log-probabilities."""

    tokens: tuple[tuple[TokenLogprob, ...], ...]
    prompt_tokens: int = 0  # over every continuation's prompt (each is context + continuation)
    latency_s: float = 0.0
    completion_tokens: int = 0  # what the server decoded (HTTP servers: one per continuation)
    http_requests: int = 1  # what the server saw (vLLM: its /tokenize calls too)


@runtime_checkable
class LikelihoodProvider(Protocol):
    provider: str
    model: str
    base_url: str | None

    async def score(self, request: ScoreRequest) -> ScoreResponse: ...


def expected_http_requests(provider: LikelihoodProvider, request: ScoreRequest) -> int:
    """The HTTP requests `provider` sends for `request` (its `http_requests_for`, else one)."""
    count = getattr(provider, "http_requests_for", None)
    return int(count(request)) if callable(count) else 1


def prompt_text(request: ScoreRequest) -> str:
    """The context as the text every backend scores continuations after."""
    return render(request.messages, request.tools)


def span_tokens(
    pieces: Sequence[tuple[str, float | None]], continuation: Continuation
) -> tuple[TokenLogprob, ...] | None:
    """The tokens of `pieces` (text, logprob; the prompt+continuation, or a tail of it, in
    order) that overlap the continuation's span. The continuation is at the end of the text,
    so offsets are counted from the end. None when `pieces` does not reach back to the span
    start (a tail that was cut too short) or a needed log-probability is missing."""
    length = len(continuation.text)
    start, end = continuation.span
    found: list[TokenLogprob] = []
    from_end = 0
    for text, logprob in reversed(pieces):
        token_end = length - from_end
        from_end += len(text)
        token_start = length - from_end
        if token_end <= start:
            return tuple(reversed(found))
        if token_start < end and token_end > start and text:
            if logprob is None:
                return None
            found.append(TokenLogprob(text, logprob))
    return tuple(reversed(found)) if length - from_end <= start else None


class Scorer:
    """A `LikelihoodProvider` behind the endpoint's limits, retries, budget and request
    deadline, through the same `Gate` as chat requests; its totals are the usage ledger's
    stage.

    `price` is the agent model's (None: free, as a local server is); `usage` the run's ledger;
    `deadline_s` the total time one scoring request may take, all its calls included.
    """

    def __init__(
        self,
        provider: LikelihoodProvider,
        *,
        limits: EndpointLimits | None = None,
        retry: RetryPolicy | None = None,
        budget: Budget | None = None,
        price: ModelPrice | None = None,
        usage: UsageLedger | None = None,
        deadline_s: float | None = None,
        stage: str = "likelihood",
    ) -> None:
        self.provider = provider
        self.limits = limits or EndpointLimits()
        self.retry = retry or RetryPolicy()
        self.budget = budget
        self.price = price
        self.usage = usage or UsageLedger()
        self.deadline_s = deadline_s
        self.stage = stage

    @property
    def requests(self) -> int:
        """Scoring requests answered (the ledger's count for this stage)."""
        return self.usage.stage(self.stage).requests

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        """Limits count what the server sees: the request's HTTP calls (one slot, as they go
        one after another) and the tokens of every continuation's prompt; each continuation
        decodes one token."""
        estimate = self.estimate(request)
        replies = len(request.continuations)
        stats = self.usage.stage(self.stage)

        def new_gate() -> Gate:
            return Gate(
                estimate, self.limits, self.budget, self._worst_usd, self._cost, self.deadline_s
            )

        async def attempt(gate: Gate) -> ScoreResponse:
            async with gate.http(replies) as sent:
                response = await self.provider.score(request)
                sent.usage = Usage(response.prompt_tokens, response.completion_tokens)
                sent.http_requests = response.http_requests
            return response

        try:
            response = await through_gates(new_gate, attempt, self.retry, stats)
        except TransientLLMError as exc:
            stats.errors[exc.kind] += 1
            raise
        billed = Usage(response.prompt_tokens, response.completion_tokens)
        parts = self.price.parts(billed) if self.price is not None else None
        stats.add_usage(billed, self._cost(billed), parts)
        return response

    def estimate(self, request: ScoreRequest) -> Estimate:
        """Every continuation is scored after the whole rendered context."""
        context = len(prompt_text(request))
        chars = sum(context + len(c.text) for c in request.continuations)
        calls = expected_http_requests(self.provider, request)
        return Estimate(chars // 4, chars // CHARS_PER_TOKEN_WORST + 1, 1, calls)

    def _cost(self, usage: Usage) -> float:
        return self.price.cost(usage) if self.price is not None else 0.0

    def _worst_usd(self, prompt: int, completion: int) -> float:
        return self.price.worst_case(prompt, completion) if self.price is not None else 0.0
