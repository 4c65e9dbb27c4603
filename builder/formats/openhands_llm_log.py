"""OpenHands LLM completion logs: one JSON file per model call (`messages` + `response`).

`messages` is the exact OpenAI-format context the model saw, so the trajectory is those
messages plus the response's assistant message, kept as logged (fidelity "exact"; list
contents keep their parts in `content_parts`). One file gives one trajectory. A run's log
directory holds one file per call, each a prefix of the next: pick the last file of a run
(the ingest layer or the user decides); cost and usage here are those of this one call, so
they go to metadata, not to the run-level fields. This is also the generic "OpenAI chat with
tools" shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from builder.errors import InputError, RecordError
from builder.formats.base import (
    BaseAdapter,
    LoadResult,
    Source,
    canonical_json,
    content_text,
    quarantine,
    trajectory_id,
)
from builder.formats.reconstruct import arguments_text, obj, split_openhands_trailer
from schemas.trajectories import FIDELITY_EXACT, Message, ToolCall, TrajectoryRecord

NAME = "openhands-llm-log"
ROLES = {"system", "user", "assistant", "tool"}
_LOG_KEYS = ("cost", "timestamp", "latency_sec", "kwargs", "context_window", "tools")


def _is_log(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("messages"), list)
        and isinstance(value.get("response"), dict)
        and any(k in value for k in _LOG_KEYS)
    )


def chat_message(raw: Any, where: str) -> Message:
    """An OpenAI chat message as a canonical `Message`, text and tool calls kept verbatim."""
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        raise RecordError(f"{where}: not an OpenAI chat message (role {_role(raw)!r})")
    text, parts = content_text(raw.get("content"))
    calls = []
    for index, call in enumerate(raw.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise RecordError(f"{where}: tool call {index} has no `function`")
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{index}"),
                name=str(function.get("name", "")),
                arguments=arguments_text(function.get("arguments")),
            )
        )
    return Message(
        role=raw["role"],
        content=text,
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
        name=raw.get("name"),
        content_parts=parts,
    )


def _role(raw: Any) -> Any:
    return raw.get("role") if isinstance(raw, dict) else type(raw).__name__


class OpenHandsLLMLogAdapter(BaseAdapter):
    name = NAME
    harness = "openhands"

    def detect(self, source: Source) -> bool:
        return _is_log(source.json_document())

    def load(self, source: Source) -> Iterator[LoadResult]:
        try:
            document = source.document()
            if not _is_log(document):
                raise RecordError(f"{source.name}: not an LLM log (`messages` and `response`)")
            yield self._record(source, document)
        except InputError as exc:
            yield quarantine(source, None, NAME, exc)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_openhands_trailer(message.content)

    def _record(self, source: Source, log: dict[str, Any]) -> TrajectoryRecord:
        messages = [
            chat_message(m, f"{source.name} message {i}") for i, m in enumerate(log["messages"])
        ]
        response = log["response"]
        choices = response.get("choices")
        reply = choices[0].get("message") if isinstance(choices, list) and choices else None
        if isinstance(reply, dict):
            messages.append(chat_message({**reply, "role": "assistant"}, f"{source.name} response"))
        kwargs = obj(log.get("kwargs"))
        tools = log.get("tools") or kwargs.get("tools")
        system = next((m.content for m in messages if m.role == "system"), None)
        task = next((m.content for m in messages if m.role == "user"), None)
        metadata = {
            "response_id": response.get("id"),
            "call_cost_usd": log.get("cost"),
            "call_usage": response.get("usage"),
            "context_window": log.get("context_window"),
            "timestamp": log.get("timestamp"),
            "latency_sec": log.get("latency_sec"),
            "response_included": isinstance(reply, dict),
            "finish_reason": choices[0].get("finish_reason") if isinstance(reply, dict) else None,
            "has_fncall_messages": "fncall_messages" in log,
        }
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, None, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=0,
            native_id=str(response["id"]) if response.get("id") else None,
            harness=self.harness,
            harness_version=_tag(kwargs, "openhands_version:"),
            agent_model=response.get("model") or kwargs.get("model"),
            task=task,
            system_prompt=system,
            tools=canonical_json(tools) if tools else None,
            messages=messages,
            fidelity=FIDELITY_EXACT,
            metadata=json.dumps(metadata, sort_keys=True, default=str),
        )


def _tag(kwargs: dict[str, Any], prefix: str) -> str | None:
    """A value from litellm metadata tags such as `openhands_version:1.0.0`."""
    metadata = (kwargs.get("extra_body") or {}).get("metadata") or {}
    for tag in metadata.get("tags") or []:
        if isinstance(tag, str) and tag.startswith(prefix):
            return tag[len(prefix) :]
    return None


ADAPTER = OpenHandsLLMLogAdapter()
