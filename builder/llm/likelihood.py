"""Prompt log-probabilities: the small protocol the likelihood gate needs, beside chat.

A `ScoreRequest` is a context (messages, tools) plus continuations, each an assistant turn as
the agent would write it with the character span of its action. A `LikelihoodProvider` returns,
per continuation, the log-probability of every token overlapping that span, given the context
and the continuation's earlier tokens (teacher forcing: one prefill, nothing decoded).

The context becomes text with `builder.llm.chat_template.render` (the open assistant turn it
ends with is where the continuation goes), for every backend, so all of them score the same
string. `Scorer` wraps a provider with the endpoint's concurrency limits and retries; it is
deliberately separate from `LLMClient` (no request cache: a prefill is cheap to redo).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from builder.errors import TransientLLMError
from builder.llm.chat_template import render
from builder.llm.limits import EndpointLimits, RetryPolicy
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
    prompt_tokens: int = 0
    latency_s: float = 0.0


@runtime_checkable
class LikelihoodProvider(Protocol):
    provider: str
    model: str
    base_url: str | None

    async def score(self, request: ScoreRequest) -> ScoreResponse: ...


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
    """A `LikelihoodProvider` behind the endpoint's limits and retries, with simple totals."""

    def __init__(
        self,
        provider: LikelihoodProvider,
        *,
        limits: EndpointLimits | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.provider = provider
        self.limits = limits or EndpointLimits()
        self.retry = retry or RetryPolicy()
        self.requests = 0
        self.prompt_tokens = 0
        self.seconds = 0.0

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        estimate = sum(len(m.content) for m in request.messages) // 4
        for attempt in range(1, self.retry.max_attempts + 1):
            await self.limits.acquire(estimate)
            started = time.perf_counter()
            try:
                response = await self.provider.score(request)
            except TransientLLMError as exc:
                if attempt == self.retry.max_attempts:
                    raise
                delay = self.retry.delay(attempt, exc.retry_after)
            else:
                self.requests += 1
                self.prompt_tokens += response.prompt_tokens
                self.seconds += time.perf_counter() - started
                return response
            finally:
                self.limits.release(estimate, None)
            await self.retry.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover
