"""OpenAI chat completions: OpenAI itself and any OpenAI-compatible server (vLLM, SGLang,
llama.cpp).

Servers differ in what they honour, so the provider detects and adapts, and records what it
obtained in `capabilities`:
- `n`: a server that returns fewer choices than asked (llama.cpp returns one) gets the missing
  samples as separate requests, with `seed + i` when a seed is given; later requests go
  straight to one request per sample.
- structured output: `{"type": "json_schema"}` first; when refused (400/422, or a 5xx as
  llama.cpp's server answers), `{"type": "json_object", "schema": ...}` (what llama.cpp
  accepts); if that works it is used from then on, else the first error stands.
The SDK's own retries are off: `LLMClient` retries.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

import openai

from builder.errors import ConfigError, TransientLLMError
from builder.llm.messages import openai_tool_calls, to_openai_messages
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from builder.llm.sdk_errors import raise_mapped, scrub

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "not-needed"  # for local servers that take no key; never a real secret


@dataclass
class Capabilities:
    """What the endpoint was seen to honour (None: not tried yet)."""

    n: bool | None = None
    response_format: str | None = None  # "json_schema" or "json_object"
    cached_tokens_reported: bool | None = None


class OpenAIProvider:
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_connections: int = 256,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.capabilities = Capabilities()
        api_key = os.environ.get(api_key_env)
        if not api_key:
            if base_url is None:
                raise ConfigError(f"set {api_key_env} to use the OpenAI API (model {model!r})")
            api_key = PLACEHOLDER_KEY  # a self-hosted server; a 401 will say to set the key
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._label = f"openai {model} at {base_url or 'api.openai.com'}"

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        await self._client.close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        if self.capabilities.n is False and request.n > 1:
            results = await self._fan_out(request, range(request.n))
        else:
            first = await self._create(request, request.n, request.seed)
            results = [first]
            got = len(first["choices"])
            if request.n > 1 and self.capabilities.n is None:
                self.capabilities.n = got >= request.n
                if got < request.n:
                    log.info(
                        "%s ignores n (asked %d, got %d): one request per sample",
                        self._label,
                        request.n,
                        got,
                    )
            if got < request.n:
                results += await self._fan_out(request, range(got, request.n))
        completions = [_completion(c) for r in results for c in r["choices"]][: request.n]
        usage = sum((_usage(r, self.capabilities) for r in results), Usage())
        model = str(results[0].get("model") or self.model)
        return ChatResponse(tuple(completions), usage, time.perf_counter() - started, model)

    async def _fan_out(self, request: ChatRequest, indices: range) -> list[dict[str, Any]]:
        """One single-sample request per index, seeded `seed + i` when a seed is given."""
        seeds = [None if request.seed is None else request.seed + i for i in indices]
        return list(await asyncio.gather(*(self._create(request, 1, s) for s in seeds)))

    async def _create(self, request: ChatRequest, n: int, seed: int | None) -> dict[str, Any]:
        dialect = self.capabilities.response_format or "json_schema"
        try:
            try:
                result = await self._post(self._body(request, n, seed, dialect))
            except openai.APIStatusError as exc:
                if not self._should_fall_back(exc, request):
                    raise
                result = await self._fall_back(request, n, seed, exc)
        except Exception as exc:
            raise_mapped(exc, openai, self._label, self.api_key_env)
        if not isinstance(result, dict) or not isinstance(result.get("choices"), list):
            shown = scrub(str(result)[:200], self.api_key_env)
            raise TransientLLMError(
                f"{self._label}: response has no choices: {shown}", kind="bad_response"
            )
        if request.json_schema is not None and self.capabilities.response_format is None:
            self.capabilities.response_format = "json_schema"
        return result

    async def _fall_back(
        self, request: ChatRequest, n: int, seed: int | None, refusal: openai.APIStatusError
    ) -> Any:
        """Retry a refused json_schema request as json_object + schema; remember it only if
        that works, else the original error stands (a 5xx may have been a plain outage)."""
        try:
            result = await self._post(self._body(request, n, seed, "json_object"))
        except openai.APIStatusError:
            raise refusal from None
        self.capabilities.response_format = "json_object"
        log.info(
            "%s refused json_schema (HTTP %d): using json_object with schema from now on",
            self._label,
            refusal.status_code,
        )
        return result

    async def _post(self, body: dict[str, Any]) -> Any:
        """POST the body as built: the SDK's typed-params transform costs ~3 ms of CPU per
        request (measured), more than the whole client budget; auth, timeouts and error
        types stay the SDK's."""
        return await self._client.post("/chat/completions", body=body, cast_to=dict[str, Any])

    def _should_fall_back(self, exc: openai.APIStatusError, request: ChatRequest) -> bool:
        return (
            request.json_schema is not None
            and self.capabilities.response_format is None
            and (exc.status_code in (400, 422) or exc.status_code >= 500)  # llama.cpp: 500
        )

    def _body(
        self, request: ChatRequest, n: int, seed: int | None, dialect: str = "json_schema"
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages),
            "temperature": request.temperature,
        }
        optional = {
            "n": n if n > 1 else None,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
            "seed": seed,
            "stop": list(request.stop) if request.stop else None,
            "tools": list(request.tools) if request.tools else None,
            "response_format": _response_format(request.json_schema, dialect),
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body


def _response_format(schema: dict[str, Any] | None, dialect: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}


def _completion(choice: dict[str, Any]) -> Completion:
    message = choice.get("message") or {}
    text = message.get("content")
    return Completion(
        text if isinstance(text, str) else "",
        openai_tool_calls(message.get("tool_calls")),
        choice.get("finish_reason"),
    )


def _usage(result: dict[str, Any], capabilities: Capabilities) -> Usage:
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if capabilities.cached_tokens_reported is None:
        capabilities.cached_tokens_reported = cached is not None
    return Usage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0, cached or 0)
