"""Pure mappings between canonical `Message`s / tool schemas and each SDK's wire shape.

Kept apart from the providers so that what is sent can be tested with plain data, no server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from schemas.trajectories import Message, ToolCall

EPHEMERAL = {"type": "ephemeral"}
ROOT_COMPOSITION = ("anyOf", "oneOf", "allOf")


def root_object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without composition keywords at its root: Anthropic tool inputs and OpenAI
    json_schema reject `anyOf`/`oneOf`/`allOf` there. A schema may carry an exact union at
    the root for grammar compilers (llama.cpp) next to a plain-object form for these APIs."""
    return {k: v for k, v in schema.items() if k not in ROOT_COMPOSITION}


# --- OpenAI chat completions -------------------------------------------------------------


def to_openai_message(message: Message, *, parts: bool = True) -> dict[str, Any]:
    """One OpenAI chat message; `content_parts` (the original content list) is sent as-is
    unless `parts` is False (for servers that only take strings: then the text is sent)."""
    out: dict[str, Any] = {"role": message.role}
    if message.content_parts and parts:
        out["content"] = json.loads(message.content_parts)
    elif message.tool_calls and not message.content:
        out["content"] = None
    else:
        out["content"] = message.content
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name and message.role != "tool":
        out["name"] = message.name
    return out


def to_openai_messages(messages: Sequence[Message], *, parts: bool = True) -> list[dict[str, Any]]:
    return [to_openai_message(m, parts=parts) for m in messages]


def openai_tool_calls(raw: Sequence[dict[str, Any]] | None) -> tuple[ToolCall, ...]:
    """Tool calls of a response message (JSON) as canonical `ToolCall`s."""
    calls = []
    for call in raw or ():
        function = call.get("function")
        if not isinstance(function, dict):  # custom (non-function) tools carry no JSON args
            continue
        arguments = function.get("arguments") or "{}"
        if not isinstance(arguments, str):  # some servers send an object
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(call.get("id") or "", function.get("name") or "", arguments))
    return tuple(calls)


# --- Anthropic Messages -------------------------------------------------------------------


def to_anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI `{"type": "function", "function": {...}}` schema as an Anthropic tool.

    Schemas already in Anthropic shape (with `input_schema`) pass through unchanged.
    """
    if "input_schema" in tool:
        return dict(tool)
    function = tool.get("function", tool)
    out: dict[str, Any] = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        out["description"] = function["description"]
    return out


def _arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments as an object; Anthropic's `tool_use.input` must be one."""
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


def _anthropic_blocks(message: Message) -> list[dict[str, Any]]:
    """The content blocks of one message. Empty text blocks are dropped (the API rejects them)."""
    if message.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        if message.content:
            block["content"] = message.content
        return [block]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _arguments(call.arguments),
            }
        )
    return blocks


def to_anthropic(
    messages: Sequence[Message], cache_prefix: int | None = None
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """(system blocks, messages) for the Messages API.

    System messages become the `system` parameter; tool results become user `tool_result`
    blocks; consecutive messages of one role are merged (the API wants alternation and all
    tool results of a turn in one user message). When `cache_prefix` is set, the last block
    that comes from message `cache_prefix - 1` gets `cache_control: ephemeral`, the end of the
    shared prefix.
    """
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    breakpoint_block: dict[str, Any] | None = None
    for index, message in enumerate(messages):
        if message.role == "system":
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            system.extend(blocks)
        else:
            role = "assistant" if message.role == "assistant" else "user"
            blocks = _anthropic_blocks(message)
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].extend(blocks)
            elif blocks:
                turns.append({"role": role, "content": blocks})
        if blocks and cache_prefix is not None and index < cache_prefix:
            breakpoint_block = blocks[-1]
    if breakpoint_block is not None:
        breakpoint_block["cache_control"] = dict(EPHEMERAL)
    return (system or None), turns
