"""Anthropic Messages API through the `anthropic` SDK.

The API has no `n`: samples are separate HTTP requests, each through the client's gate (slot,
rate limits, budget, deadline). The `cache_control` breakpoint at the end of the shared prefix
(`ChatRequest.cache_prefix`; the whole prompt for n samples of one prompt, as the teacher's)
lets them, and the K agent requests of a step, read the prefix from Anthropic's prompt cache;
with a breakpoint, the first sample goes alone (it writes the cache, billed at 1.25x input)
and the others follow in parallel (they read it, at 0.1x). Structured
output uses a forced tool whose input schema is the requested JSON schema; its input becomes
the completion text.

The body is posted as built (`client.post`), not through `messages.create`: its signature
drifts between SDK versions (recent ones dropped `temperature`), and its typed-params
transform costs milliseconds of CPU per request. Auth, timeouts and error types are the SDK's;
its HTTP stack is aiohttp (`DefaultAioHttpClient`, the `anthropic[aiohttp]` extra) unless the
role's `transport` is `httpx` (benchmarks/bench_anthropic_transport.py measures both).

Models released after Claude Opus 4.6 refuse `temperature` (and top_p, top_k): known ones are
sent without it (`builder.llm.model_rules`), and a model that refuses it anyway is sent without
it from then on (race-free: a request compares the refusal with the body it sent).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any

import anthropic

from builder.errors import ConfigError, TransientLLMError
from builder.llm.admission import Gate, NoGate
from builder.llm.error_kinds import SAMPLING, refusal_kind
from builder.llm.messages import root_object_schema, to_anthropic, to_anthropic_tool
from builder.llm.model_rules import model_rules
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from builder.llm.sdk_errors import raise_mapped
from schemas.trajectories import ToolCall

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 1024  # the API requires max_tokens
SCHEMA_TOOL = "respond"
SAMPLING_PARAMS = frozenset({"temperature", "top_p"})


class AnthropicProvider:
    provider = "anthropic"
    uses_gate = True  # opens the client's gate per HTTP request

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        api_key_env: str = "ANTHROPIC_API_KEY",
        transport: str = "aiohttp",
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        api_key = os.environ.get(self.api_key_env)
        if not api_key:
            raise ConfigError(f"set {self.api_key_env} to use the Anthropic API (model {model!r})")
        self.transport = "httpx" if transport == "httpx" else "aiohttp"
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=_http_client(self.transport),
        )
        fixed = model_rules(self.provider, model).fixed_sampling
        self.refused_sampling = SAMPLING_PARAMS if fixed else frozenset()
        self._label = f"anthropic {model} at {base_url or 'api.anthropic.com'}"

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        await self._client.close()

    async def complete(
        self, request: ChatRequest, gate: Gate | NoGate | None = None
    ) -> ChatResponse:
        started = time.perf_counter()
        gate = gate or NoGate()
        first = [await self._create(request, gate)] if request.n > 1 else []
        rest = await asyncio.gather(
            *(self._create(request, gate) for _ in range(request.n - len(first)))
        )
        results = first + list(rest)
        structured = request.json_schema is not None
        completions = tuple(to_completion(r, structured=structured) for r in results)
        usage = sum((to_usage(r.get("usage") or {}) for r in results), Usage())
        model = str(results[0].get("model") or self.model)
        return ChatResponse(completions, usage, time.perf_counter() - started, model)

    async def _create(self, request: ChatRequest, gate: Gate | NoGate) -> dict[str, Any]:
        async with gate.http(1) as sent:
            try:
                result = await self._post_adapting(request)
            except Exception as exc:
                raise_mapped(exc, anthropic, self._label, self.api_key_env)
            if not isinstance(result, dict) or not isinstance(result.get("content"), list):
                raise TransientLLMError(
                    f"{self._label}: response has no content", kind="bad_response"
                )
            sent.usage = to_usage(result.get("usage") or {})
        return result

    async def _post_adapting(self, request: ChatRequest) -> dict[str, Any]:
        """POST; a refused sampling parameter the body carried is left out from then on and
        the body goes again (at most once per parameter)."""
        for _ in range(len(SAMPLING_PARAMS) + 1):
            left_out = self.refused_sampling
            body = build_request(self.model, request, left_out)
            try:
                answer = await self._client.post("/v1/messages", body=body, cast_to=dict[str, Any])
                return dict(answer)
            except anthropic.APIStatusError as exc:
                refusal = refusal_kind(exc.body, str(exc.message))
                param = refusal.param if refusal is not None else None
                if refusal is None or refusal.kind != SAMPLING or param not in body:
                    raise
                if param not in self.refused_sampling:
                    log.info("%s refuses %s: sent without it from now on", self._label, param)
                self.refused_sampling = self.refused_sampling | {param}
        raise AssertionError("unreachable")  # pragma: no cover


def _http_client(transport: str) -> Any:
    """The SDK's HTTP stack: aiohttp (the least CPU per request, measured) or httpx."""
    if transport == "httpx":
        return anthropic.DefaultAsyncHttpxClient()
    try:
        return anthropic.DefaultAioHttpClient()
    except RuntimeError as exc:  # the SDK without its aiohttp extra
        fix = f"install 'anthropic[aiohttp]' ({exc}), or set transport: httpx"
        raise ConfigError(fix) from None


def build_request(
    model: str, request: ChatRequest, left_out: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The Messages API request body (pure, so the wire shape is testable); `left_out`
    sampling parameters are not sent."""
    prefix = request.cache_prefix
    if prefix is None and request.n > 1:  # n samples of one prompt share all of it
        prefix = len(request.messages)
    system, messages = to_anthropic(request.messages, prefix)
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        **{k: v for k, v in sampling_params(request).items() if k not in left_out},
    }
    tools = [to_anthropic_tool(t) for t in request.tools or ()]
    if request.json_schema is not None:
        tools.append(
            {
                "name": SCHEMA_TOOL,
                "description": "Give the answer as this tool's input.",
                "input_schema": root_object_schema(request.json_schema),
            }
        )
        body["tool_choice"] = {"type": "tool", "name": SCHEMA_TOOL}
    optional = {
        "system": system,
        "tools": tools or None,
        "stop_sequences": list(request.stop) if request.stop else None,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def sampling_params(request: ChatRequest) -> dict[str, float]:
    """Temperature / top_p only when they differ from the API's defaults (some recent models
    refuse them; such a model answers 400, which says so)."""
    params: dict[str, float] = {}
    if request.temperature != 1.0:
        params["temperature"] = request.temperature
    if request.top_p is not None:
        params["top_p"] = request.top_p
    return params


def to_completion(message: dict[str, Any], *, structured: bool = False) -> Completion:
    """Text blocks joined; `tool_use` blocks as tool calls (or, for structured output, the
    forced tool's input as JSON text)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    answer: str | None = None
    for block in message["content"]:
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            if structured and block.get("name") == SCHEMA_TOOL:
                answer = arguments
            else:
                calls.append(ToolCall(block.get("id") or "", block.get("name") or "", arguments))
    text = answer if answer is not None else "".join(texts)
    return Completion(text, tuple(calls), message.get("stop_reason"))


def to_usage(usage: dict[str, Any]) -> Usage:
    """OpenAI-style usage: prompt tokens include cache reads and writes; cached = cache reads;
    writes split by TTL (`cache_creation.ephemeral_1h_input_tokens`; the rest is 5-minute)."""
    read = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    by_ttl = usage.get("cache_creation") or {}
    hour = min(written, by_ttl.get("ephemeral_1h_input_tokens") or 0)
    fresh = usage.get("input_tokens") or 0
    output = usage.get("output_tokens") or 0
    return Usage(fresh + read + written, output, read, written - hour, hour)
