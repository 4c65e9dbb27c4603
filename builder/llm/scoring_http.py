"""Prompt log-probabilities from vLLM and SGLang servers, in their documented shapes.

- vLLM, `POST {base_url}/completions` with `prompt_logprobs: 0` and token-id prompts built
  with the server's `POST /tokenize` (its own chat template): each choice carries
  `prompt_logprobs`, one entry per prompt token, `None` for the first, else
  `{token_id: {"logprob", "rank", "decoded_token"}}` with the prompt token first.
- SGLang, `POST {root}/generate` (`root` = base_url without `/v1`) with `return_logprob`,
  `logprob_start_len` and `return_text_in_logprobs`: `meta_info.input_token_logprobs` is a list
  of `[logprob, token_id, text]` from `logprob_start_len` on (`None` logprob for token 0).
  `logprob_start_len` is a safe lower bound of the context's tokens (characters / 16); when the
  tail it returns does not reach the action, the request is repeated from token 0. SGLang's
  /generate takes text, so the context is rendered with `builder.llm.chat_template` (the
  Gemma turn format): right for Gemma models, an approximation for others.

Both score every continuation of a request in one batched call; the servers' prefix caches
keep the shared context from being recomputed.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

from builder.errors import PermanentLLMError, TransientLLMError
from builder.llm.messages import to_openai_messages
from builder.llm.scoring import (
    ScoreRequest,
    ScoreResponse,
    TokenLogprob,
    prompt_text,
    span_tokens,
)

CHARS_PER_TOKEN_BOUND = 16  # no tokenizer averages more characters per token on real prompts


class _HTTPLikelihood:
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 600.0,
    ) -> None:
        self.model = model
        self.base_url: str | None = base_url.rstrip("/")
        key = os.environ.get(api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.AsyncClient(timeout=timeout, headers=headers)

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        try:
            reply = await self._http.post(url, json=body)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientLLMError(f"{url}: {type(exc).__name__}", kind="connection") from exc
        if reply.status_code == 429 or reply.status_code >= 500:
            raise TransientLLMError(f"{url}: HTTP {reply.status_code}", kind="server")
        if reply.status_code >= 400:
            raise PermanentLLMError(
                f"{url}: HTTP {reply.status_code}: {reply.text[:300]} (does this server return "
                "prompt log-probabilities? check gate.likelihood_api)"
            )
        return reply.json()

    async def aclose(self) -> None:
        await self._http.aclose()


def _no_span(url: str) -> PermanentLLMError:
    return PermanentLLMError(
        f"{url}: the returned prompt tokens do not cover the scored action (missing log-"
        "probabilities or token texts); check gate.likelihood_api"
    )


class VLLMLikelihood(_HTTPLikelihood):
    """`prompt_logprobs` on vLLM's /v1/completions, on token ids from vLLM's own /tokenize.

    The context goes through the server's chat template (`/tokenize` with `messages` and
    `add_generation_prompt`), the continuation is tokenized on its own (no special tokens), and
    /v1/completions scores the concatenated ids; the continuation's log-probabilities are the
    last entries of `prompt_logprobs`. So the model sees exactly the prompt it generates from.
    """

    @staticmethod
    def http_requests_for(request: ScoreRequest) -> int:
        """/tokenize for the context and for each continuation, then /v1/completions."""
        return len(request.continuations) + 2

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        started = time.perf_counter()
        root = _root(self.base_url or "")
        chat: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages, parts=False),
            "add_generation_prompt": True,
        }
        if request.tools:
            chat["tools"] = list(request.tools)
        prefix = (await self._post(f"{root}/tokenize", chat))["tokens"]
        pieces = []
        for continuation in request.continuations:
            body = {"model": self.model, "prompt": continuation.text, "add_special_tokens": False}
            pieces.append((await self._post(f"{root}/tokenize", body))["tokens"])
        url = f"{self.base_url}/completions"
        body = {
            "model": self.model,
            "prompt": [[*prefix, *ids] for ids in pieces],
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 0,
        }
        data = await self._post(url, body)
        choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != len(request.continuations):
            raise _no_span(url)
        tokens = []
        for choice, continuation, ids in zip(choices, request.continuations, pieces, strict=True):
            entries = choice.get("prompt_logprobs") or []
            tail = [_vllm_piece(entry) for entry in entries[len(entries) - len(ids) :]]
            found = span_tokens(tail, continuation) if len(entries) >= len(ids) else None
            if found is None:
                raise _no_span(url)
            tokens.append(found)
        usage = data.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        decoded = int(usage.get("completion_tokens") or len(choices))
        seconds = time.perf_counter() - started
        calls = self.http_requests_for(request)
        return ScoreResponse(tuple(tokens), prompt_tokens, seconds, decoded, calls)


def _root(base_url: str) -> str:
    """The server root (vLLM's /tokenize and SGLang's /generate live there, not under /v1)."""
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


def _vllm_piece(entry: dict[str, Any] | None) -> tuple[str, float | None]:
    if not entry:
        return "", None  # the first prompt token has no log-probability
    first = next(iter(entry.values()))
    return str(first.get("decoded_token") or ""), first.get("logprob")


class SGLangLikelihood(_HTTPLikelihood):
    """`return_logprob` with `logprob_start_len` on SGLang's native /generate."""

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        started = time.perf_counter()
        prefix = prompt_text(request)
        url = f"{_root(self.base_url or '')}/generate"
        start = len(prefix) // CHARS_PER_TOKEN_BOUND
        tokens, prompt_tokens = await self._score_from(url, prefix, request, start)
        calls = 1
        if tokens is None and start > 0:
            tokens, again = await self._score_from(url, prefix, request, 0)
            prompt_tokens, calls = prompt_tokens + again, 2  # both calls are billed
        if tokens is None:
            raise _no_span(url)
        decoded = calls * len(request.continuations)  # max_new_tokens: 1 each
        seconds = time.perf_counter() - started
        return ScoreResponse(tokens, prompt_tokens, seconds, decoded, calls)

    async def _score_from(
        self, url: str, prefix: str, request: ScoreRequest, start: int
    ) -> tuple[tuple[tuple[TokenLogprob, ...], ...] | None, int]:
        body = {
            "text": [prefix + c.text for c in request.continuations],
            "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
            "return_logprob": True,
            "logprob_start_len": start,
            "return_text_in_logprobs": True,
        }
        data = await self._post(url, body)
        items = data if isinstance(data, list) else [data]
        if len(items) != len(request.continuations):
            raise _no_span(url)
        metas = [item.get("meta_info") or {} for item in items]
        prompt_tokens = sum(int(meta.get("prompt_tokens") or 0) for meta in metas)  # all billed
        tokens = []
        for meta, continuation in zip(metas, request.continuations, strict=True):
            pieces = [(str(e[2] or ""), e[0]) for e in meta.get("input_token_logprobs") or []]
            found = span_tokens(pieces, continuation)
            if found is None:
                return None, prompt_tokens
            tokens.append(found)
        return tuple(tokens), prompt_tokens
