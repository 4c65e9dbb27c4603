"""Anthropic Messages API through the `anthropic` SDK.

The API has no `n`: samples are parallel requests, and the `cache_control` breakpoint at the end
of the shared prefix (`ChatRequest.cache_prefix`) lets all of them, and the K agent requests of
a step, read the prefix from Anthropic's prompt cache. Structured output uses a forced tool
whose input schema is the requested JSON schema; its input becomes the completion text.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import anthropic

from builder.errors import ConfigError, TransientLLMError
from builder.llm.messages import to_anthropic, to_anthropic_tool
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from builder.llm.sdk_errors import raise_mapped
from schemas.trajectories import ToolCall

DEFAULT_MAX_TOKENS = 1024  # the API requires max_tokens
SCHEMA_TOOL = "respond"


class AnthropicProvider:
    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        api_key_env: str = "ANTHROPIC_API_KEY",
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        api_key = os.environ.get(self.api_key_env)
        if not api_key:
            raise ConfigError(f"set {self.api_key_env} to use the Anthropic API (model {model!r})")
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._label = f"anthropic {model} at {base_url or 'api.anthropic.com'}"

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        await self._client.close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        kwargs = build_request(self.model, request)
        results = await asyncio.gather(*(self._create(kwargs) for _ in range(request.n)))
        completions = tuple(
            to_completion(r, structured=request.json_schema is not None) for r in results
        )
        usage = sum((to_usage(r.usage) for r in results), Usage())
        return ChatResponse(completions, usage, time.perf_counter() - started, results[0].model)

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        try:
            result = await self._client.messages.create(**kwargs)
        except Exception as exc:
            raise_mapped(exc, anthropic, self._label, self.api_key_env)
        if isinstance(result, str) or getattr(result, "content", None) is None:
            raise TransientLLMError(f"{self._label}: response has no content", kind="bad_response")
        return result


def build_request(model: str, request: ChatRequest) -> dict[str, Any]:
    """The keyword arguments of `messages.create` (pure, so the wire shape is testable)."""
    system, messages = to_anthropic(request.messages, request.cache_prefix)
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
    }
    sampling = sampling_params(request)
    if sampling:
        kwargs["extra_body"] = sampling
    tools = [to_anthropic_tool(t) for t in request.tools or ()]
    if request.json_schema is not None:
        tools.append(
            {
                "name": SCHEMA_TOOL,
                "description": "Give the answer as this tool's input.",
                "input_schema": request.json_schema,
            }
        )
        kwargs["tool_choice"] = {"type": "tool", "name": SCHEMA_TOOL}
    optional = {
        "system": system,
        "tools": tools or None,
        "stop_sequences": list(request.stop) if request.stop else None,
    }
    kwargs.update({k: v for k, v in optional.items() if v is not None})
    return kwargs


def sampling_params(request: ChatRequest) -> dict[str, float]:
    """Temperature / top_p only when they differ from the API's defaults.

    Recent SDKs dropped them from `messages.create` (newer models fix sampling), so they go
    in the body directly; a model that refuses them answers 400, which says so.
    """
    params: dict[str, float] = {}
    if request.temperature != 1.0:
        params["temperature"] = request.temperature
    if request.top_p is not None:
        params["top_p"] = request.top_p
    return params


def to_completion(message: Any, *, structured: bool = False) -> Completion:
    """Text blocks joined; `tool_use` blocks as tool calls (or, for structured output, the
    forced tool's input as JSON text)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    answer: str | None = None
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = json.dumps(block.input, ensure_ascii=False)
            if structured and block.name == SCHEMA_TOOL:
                answer = arguments
            else:
                calls.append(ToolCall(block.id, block.name, arguments))
    text = answer if answer is not None else "".join(texts)
    return Completion(text, tuple(calls), message.stop_reason)


def to_usage(usage: Any) -> Usage:
    """OpenAI-style usage: prompt tokens include cache reads and writes; cached = cache reads."""
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return Usage(usage.input_tokens + read + written, usage.output_tokens, read)
