"""OpenHands LLM completion logs: one JSON file per model call (`messages` + `response`).

`messages` is the exact OpenAI-format context the model saw, so the trajectory is those
messages plus the response's assistant message, kept as logged (fidelity "exact"; list
contents keep their parts in `content_parts`). One file gives one trajectory. A run's log
directory holds one file per call, each a prefix of the next: pick the last file of a run
(the ingest layer or the user decides); cost and usage here are those of this one call, so
they go to metadata, not to the run-level fields. This is also the generic "OpenAI chat with
tools" shape.

Non-function-calling logs (models driven through OpenHands' prompt-based tool calling) carry
the calls as text in `messages` (`<function=NAME><parameter=K>V</parameter></function>`, results
as user messages `EXECUTION RESULT of [NAME]:`) and the native form beside them
(`fncall_messages`/`fncall_response`, or `raw_messages`/`raw_response`). The native form is
read when it is there; otherwise the text-form calls are parsed as actions (`parse_action`) and
the user message after each is its observation. The final response is put in the same form
as the messages: text-form calls in a native log become `tool_calls`, and native calls in a
text-form log are written out as text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats import grammars
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    canonical_json,
    content_text,
    hand_over,
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.chat_messages import split_marked_observation
from builder.ingest.formats.reconstruct import arguments_text, obj, split_openhands_trailer
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import FIDELITY_EXACT, Message, ToolCall, TrajectoryRecord

NAME = "openhands-llm-log"
ROLES = ("system", "user", "assistant", "tool")  # a tuple: `in` must not hash a dict
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


NATIVE_COPIES = (("fncall_messages", "fncall_response"), ("raw_messages", "raw_response"))


def chat_and_reply(log: dict[str, Any]) -> tuple[list[Any], dict[str, Any], str]:
    """(messages, response, where they came from): the native copy when the log has one."""
    for messages_key, response_key in NATIVE_COPIES:
        if isinstance(log.get(messages_key), list):
            response = log.get(response_key)
            return (
                log[messages_key],
                response if isinstance(response, dict) else log["response"],
                messages_key,
            )
    return log["messages"], log["response"], "messages"


def is_native(messages: list[Message]) -> bool:
    return any(m.tool_calls or m.role == "tool" for m in messages)


def reply_like(reply: Message, native: bool) -> Message:
    """The final response in the form of the messages before it (see the module docstring)."""
    if native and not reply.tool_calls:
        actions = grammars.xml_function_calls(reply.content)
        if not actions:
            return reply
        calls = [
            ToolCall(id=f"text_call_{i}", name=a.tool, arguments=a.arguments)
            for i, a in enumerate(actions)
        ]
        content = reply.content
        for action in actions:
            content = content.replace(action.raw, "")
        return replace(reply, content=content.strip(), tool_calls=calls)
    if not native and reply.tool_calls:
        texts = [reply.content] if reply.content else []
        for call in reply.tool_calls:
            params = json.loads(call.arguments) if call.arguments.strip() else {}
            body = "".join(
                f"<parameter={k}>{v if isinstance(v, str) else canonical_json(v)}</parameter>\n"
                for k, v in (params.items() if isinstance(params, dict) else [])
            )
            texts.append(f"<function={call.name}>\n{body}</function>")
        return replace(reply, content="\n".join(texts), tool_calls=[])
    return reply


def _role(raw: Any) -> Any:
    return raw.get("role") if isinstance(raw, dict) else type(raw).__name__


class OpenHandsLLMLogAdapter(BaseAdapter):
    name = NAME
    harness = "openhands"
    persistent_shell = True  # one bash session (tmux) for the whole run: a `cd` stays

    def detect(self, source: Source) -> bool:
        return _is_log(source.json_document())

    def load(self, source: Source) -> Iterator[LoadResult]:
        box: list[LoadResult] = []  # the record, held by nothing else once handed over
        try:
            if not _is_log(source.document()):
                raise RecordError(f"{source.name}: not an LLM log (`messages` and `response`)")
            box.append(self._record(source, source.document()))
        except InputError as exc:
            box.append(quarantine(source, None, NAME, exc))
        source.release()  # the record alone holds the text now (see FormatAdapter.load)
        yield from hand_over(box)

    def parse_action(self, message: Message) -> list[Action]:
        """Native tool calls, else text-form `<function=...>` calls (never fenced blocks)."""
        if message.tool_calls:
            return super().parse_action(message)
        return grammars.xml_function_calls(message.content)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        head, payload, _ = split_marked_observation(message.content)
        _, payload, tail = split_openhands_trailer(payload)
        return head, payload, tail

    def _record(self, source: Source, log: dict[str, Any]) -> TrajectoryRecord:
        raw_messages, response, origin = chat_and_reply(log)
        label = "message" if origin == "messages" else origin
        messages = [
            chat_message(m, f"{source.name} {label} {i}") for i, m in enumerate(raw_messages)
        ]
        native = is_native(messages)
        choices: Any = response.get("choices")
        first: Any = choices[0] if isinstance(choices, list) and choices else None
        reply = first.get("message") if isinstance(first, dict) else None
        if isinstance(reply, dict):
            last = chat_message({**reply, "role": "assistant"}, f"{source.name} response")
            messages.append(reply_like(last, native))
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
            "finish_reason": first.get("finish_reason") if isinstance(reply, dict) else None,
            "has_fncall_messages": "fncall_messages" in log,
            "messages_from": origin,
            "tool_call_form": "native" if native else "text",
        }
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, None, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=0,
            native_id=str(response["id"]) if response.get("id") else None,
            harness=self.harness,
            harness_version=_tag(kwargs, "openhands_version:"),
            agent_model=_text(response.get("model")) or _text(kwargs.get("model")),
            task=task,
            system_prompt=system,
            tools=canonical_json(tools) if tools else None,
            messages=messages,
            fidelity=FIDELITY_EXACT,
            metadata=json.dumps(metadata, sort_keys=True, default=str),
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _tag(kwargs: dict[str, Any], prefix: str) -> str | None:
    """A value from litellm metadata tags such as `openhands_version:1.0.0`."""
    tags = obj(obj(kwargs.get("extra_body")).get("metadata")).get("tags")
    for tag in tags if isinstance(tags, list) else []:
        if isinstance(tag, str) and tag.startswith(prefix):
            return tag[len(prefix) :]
    return None


ADAPTER = OpenHandsLLMLogAdapter()
