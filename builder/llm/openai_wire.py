"""The OpenAI chat-completions wire format: request bodies and what replies carry.

Pure functions of the request and of what the endpoint was seen to honour (`Capabilities`),
so that what is sent can be tested without a server. `encoded_body` is the direct
transport's: the same body as `wire_body`, with each context message encoded once per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builder.llm.fragments import FragmentMemo, dumps, splice
from builder.llm.messages import (
    openai_tool_calls,
    root_object_schema,
    to_openai_message,
    to_openai_messages,
)
from builder.llm.protocol import ChatRequest, Completion, Usage
from schemas.trajectories import Message

Params = tuple[str, frozenset[str]]  # (the max-tokens parameter, sampling parameters left out)
Encoded = dict[tuple[str, bool, Params], bytes]  # request bodies by form


@dataclass
class Capabilities:
    """What the endpoint was seen to honour (None: not tried yet), and what the model table
    (`builder.llm.model_rules`) or a refusal taught: parameters left out, the max-tokens
    parameter, the reasoning effort to ask for."""

    n: bool | None = None
    response_format: str | None = None  # "json_schema_strict", "json_schema" or "json_object"
    max_tokens_param: str | None = None  # "max_tokens" or "max_completion_tokens"
    content_parts: bool | None = None  # accepts content as a list of parts
    cached_tokens_reported: bool | None = None
    refused_sampling: frozenset[str] = frozenset()  # "temperature", "top_p": never sent
    reasoning_effort: str | None = None

    def params(self) -> Params:
        """The parameter form of a body built now (a request in flight keeps its own)."""
        return (self.max_tokens_param or "max_tokens", self.refused_sampling)


def body_fields(
    model: str,
    capabilities: Capabilities,
    request: ChatRequest,
    n: int,
    seed: int | None,
    dialect: str,
    params: Params | None = None,
) -> dict[str, Any]:
    """The body with a placeholder for the messages (in their place: after `model`), in the
    parameter form `params` (the capabilities' current one by default)."""
    tokens_param, refused = params or capabilities.params()
    body: dict[str, Any] = {"model": model, "messages": None}
    if "temperature" not in refused:
        body["temperature"] = request.temperature
    optional = {
        "n": n if n > 1 else None,
        "top_p": None if "top_p" in refused else request.top_p,
        tokens_param: request.max_tokens,
        "reasoning_effort": capabilities.reasoning_effort,
        "seed": seed,
        "stop": list(request.stop) if request.stop else None,
        "tools": list(request.tools) if request.tools else None,
        "response_format": response_format(request.json_schema, dialect),
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def wire_body(
    model: str,
    capabilities: Capabilities,
    request: ChatRequest,
    n: int,
    seed: int | None,
    dialect: str = "json_schema",
    parts: bool = True,
    params: Params | None = None,
) -> dict[str, Any]:
    body = body_fields(model, capabilities, request, n, seed, dialect, params)
    body["messages"] = to_openai_messages(request.messages, parts=parts)
    return body


def encoded_body(
    model: str,
    capabilities: Capabilities,
    request: ChatRequest,
    n: int,
    seed: int | None,
    dialect: str,
    parts: bool,
    params: Params | None = None,
) -> bytes:
    """`wire_body` as JSON bytes, each context message encoded once per run (`_WIRE`)."""
    fields = body_fields(model, capabilities, request, n, seed, dialect, params)
    messages = _WIRE.array(request.messages, parts)
    return splice(fields, "messages", messages, sort_keys=False).encode("utf-8")


def _wire_message(message: Message, parts: bool) -> str:
    return dumps(to_openai_message(message, parts=parts))


_WIRE = FragmentMemo(_wire_message)


def response_format(schema: dict[str, Any] | None, dialect: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    if dialect == "json_object":  # llama.cpp: the whole schema, root union included
        return {"type": "json_object", "schema": schema}
    spec: dict[str, Any] = {"name": "response", "schema": root_object_schema(schema)}
    if dialect == "json_schema_strict":
        spec["strict"] = True
    return {"type": "json_schema", "json_schema": spec}


def is_strict_compatible(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts `schema`: every object lists all its properties
    as required and forbids additional ones (checked through nested schemas)."""
    if isinstance(schema, list):
        return all(is_strict_compatible(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or []) != set(props):
            return False
    nested = [v for k, v in schema.items() if k in ("properties", "$defs", "definitions")]
    children = [c for group in nested if isinstance(group, dict) for c in group.values()]
    children += [schema[k] for k in ("items", "anyOf", "oneOf", "allOf") if k in schema]
    return all(is_strict_compatible(c) for c in children)


def completion_of(choice: dict[str, Any]) -> Completion:
    message = choice.get("message") or {}
    text = message.get("content")
    return Completion(
        text if isinstance(text, str) else "",
        openai_tool_calls(message.get("tool_calls")),
        choice.get("finish_reason"),
    )


def usage_of(result: dict[str, Any], capabilities: Capabilities) -> Usage:
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if capabilities.cached_tokens_reported is None:
        capabilities.cached_tokens_reported = cached is not None
    return Usage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0, cached or 0)
