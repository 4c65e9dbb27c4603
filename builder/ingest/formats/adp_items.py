"""Canonical trajectories to and from the Agent Data Protocol (ADP, arXiv 2510.24702).

ADP's standardized trajectory is `{schema_version, id, content, available_code_languages?,
details}`; `content` holds actions (`api_action {function, kwargs}`, `code_action {language,
content}`, `message_action {content}`, each with an optional `description`, the thought) and
observations (`text_observation {content, name, source}`), a tool action and its result linked
by `tool_call_id`. Written from the schema of github.com/neulab/agent-data-protocol (`schema/`
and `datasets/swe-smith/sample_std.json` at commit 0dc0875; schema version 1.5.0).

The mapping, message by message:
- user → `text_observation` (source `user`); system → the same with `name: "system"`;
- assistant without tool calls → `message_action` with its text (text-grammar harnesses keep
  their action in it, exactly as logged);
- assistant with tool calls → one action per call, the text as the first one's description: a
  call whose only argument is a string `command` is a `code_action` (language `bash`), any other
  an `api_action`;
- tool → `text_observation` (source `environment`) with the call's `tool_call_id` and name.
What ADP has no field for (the tool name behind a bash `code_action`, argument text that is not
compact JSON, structured content, demo flags, the trajectory's own fields) goes in
`details.nap_builder`, so `nap-builder` reads its own export back to the same trajectory.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from schemas.trajectories import Message, ToolCall

SCHEMA_VERSION = "1.5.0"
DETAILS = "nap_builder"
SHELL_LANGUAGES = ("bash", "sh", "shell", "console", "commandline")
TRAJECTORY_FIELDS = (
    "source_format", "native_id", "harness", "harness_version", "agent_model", "task",
    "system_prompt", "tools", "exit_status", "resolved", "cost_usd", "prompt_tokens",
    "completion_tokens", "api_calls", "fidelity", "is_sidechain", "metadata",
)  # fmt: skip


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arguments(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        return None


def _action(
    call: ToolCall, description: str | None, extra: dict[str, Any], where: str
) -> dict[str, Any]:
    """The ADP action of one tool call; what ADP cannot hold goes to `extra`, keyed by the
    action's content index (`where`: call ids are not unique in every log)."""
    arguments = _arguments(call)
    item: dict[str, Any]
    if (
        isinstance(arguments, dict)
        and set(arguments) == {"command"}
        and isinstance(arguments["command"], str)
    ):
        extra.setdefault("tool_names", {})[where] = call.name
        item = {"tool_call_id": call.id, "class_": "code_action", "language": "bash",
                "content": arguments["command"], "description": description}  # fmt: skip
    else:
        kwargs = arguments if isinstance(arguments, dict) else {"_raw": call.arguments}
        item = {"tool_call_id": call.id, "class_": "api_action", "function": call.name,
                "kwargs": kwargs, "description": description}  # fmt: skip
    if not isinstance(arguments, dict) or compact(arguments) != call.arguments:
        extra.setdefault("arguments", {})[where] = call.arguments
    return item


def to_content(messages: list[Message], extra: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """(ADP content, index of each message's first item) of a message list."""
    content: list[dict[str, Any]] = []
    positions = []
    for index, message in enumerate(messages):
        positions.append(len(content))
        if message.content_parts is not None:
            extra.setdefault("content_parts", {})[str(index)] = message.content_parts
        if message.is_demo:
            extra.setdefault("demo", []).append(index)
        if message.role == "assistant" and message.tool_calls:
            thought = message.content or None
            if thought is None and content and content[-1]["class_"].endswith("_action"):
                extra.setdefault("turn_starts", []).append(len(content))  # two turns back to back
            for n, call in enumerate(message.tool_calls):
                where = str(len(content))
                content.append(_action(call, thought if n == 0 else None, extra, where))
        elif message.role == "assistant":
            content.append(
                {"class_": "message_action", "content": message.content, "description": None}
            )
        elif message.role == "tool":
            content.append(
                {
                    "tool_call_id": message.tool_call_id,
                    "class_": "text_observation",
                    "content": message.content,
                    "name": message.name,
                    "source": "environment",
                }
            )
        else:
            name = "system" if message.role == "system" else message.name
            content.append({"class_": "text_observation", "content": message.content, "name": name,
                            "source": "user"})  # fmt: skip
    _unique_ids(content, extra)
    _unlink_unanswered(content, extra)
    return content, positions


def _unique_ids(content: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    """ADP wants action ids unique; some logs reuse one (SWE-agent demonstrations). A repeated
    id, and the results that follow it, get `<id>~<n>`; `details` keeps the logged one."""
    seen: dict[str, int] = {}
    current: dict[str, str] = {}  # logged id -> the id in use since its latest action
    for index, item in enumerate(content):
        logged = item.get("tool_call_id")
        if logged is None:
            continue
        if item["class_"].endswith("_action"):
            seen[logged] = seen.get(logged, 0) + 1
            current[logged] = logged if seen[logged] == 1 else f"{logged}~{seen[logged] - 1}"
        new = current.get(logged, logged)
        if new != logged:
            item["tool_call_id"] = new
            extra.setdefault("logged_ids", {})[str(index)] = logged


def _unlink_unanswered(content: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    """ADP wants every linked action answered: a call without a result (cut off, refused
    before it ran) loses its `tool_call_id`, kept in `details` by content index."""
    answered = {i.get("tool_call_id") for i in content if i["class_"] == "text_observation"}
    for index, item in enumerate(content):
        unanswered = item.get("tool_call_id") not in answered
        if item["class_"].endswith("_action") and "tool_call_id" in item and unanswered:
            extra.setdefault("call_ids", {})[str(index)] = item.pop("tool_call_id")


def from_content(
    content: list[Any], extra: dict[str, Any], counts: dict[str, int]
) -> list[Message]:
    """Chat messages of ADP content: consecutive actions with nothing between them are one
    assistant turn (its text the first one's description); an observation with a known
    `tool_call_id` (or right after an action that has none) is that call's result."""
    messages: list[Message] = []
    turn: list[ToolCall] = []
    thought = ""
    known: dict[str, str] = {}
    last_unlinked: str | None = None
    starts = set(extra.get("turn_starts") or [])
    logged: dict[str, str] = extra.get("logged_ids") or {}

    def close() -> None:
        nonlocal turn, thought
        if turn:
            messages.append(Message(role="assistant", content=thought, tool_calls=turn))
        turn, thought = [], ""

    for number, item in enumerate(content):
        kind = item.get("class_") if isinstance(item, dict) else None
        if kind in ("api_action", "code_action"):
            description = item.get("description") or ""
            if turn and (description or number in starts):
                close()
            if not turn:
                thought = description
            call_id = item.get("tool_call_id") or (extra.get("call_ids") or {}).get(str(number))
            if not call_id:
                call_id = last_unlinked = f"call_{number:06d}"
            call = _call(item, str(call_id), extra, str(number))
            known[call.id] = call.name
            call = dataclasses.replace(call, id=logged.get(str(number), call.id))
            turn.append(call)
        elif kind == "message_action":
            close()
            messages.append(Message(role="assistant", content=str(item.get("content") or "")))
        elif kind == "text_observation":
            close()
            message = _observation(item, known, last_unlinked)
            if message.tool_call_id is not None and str(number) in logged:
                message = dataclasses.replace(message, tool_call_id=logged[str(number)])
            messages.append(message)
            last_unlinked = None
        else:
            close()
            counts[f"skipped:{kind}"] = counts.get(f"skipped:{kind}", 0) + 1
    close()
    return _restore(messages, extra)


def _call(item: dict[str, Any], call_id: str, extra: dict[str, Any], where: str) -> ToolCall:
    exact = (extra.get("arguments") or {}).get(where)
    if item["class_"] == "code_action":
        language = str(item.get("language") or "bash")
        name = (extra.get("tool_names") or {}).get(where)
        if name is None:
            name = "bash" if language in SHELL_LANGUAGES else language
        key = "command" if language in SHELL_LANGUAGES else "code"
        arguments = compact({key: str(item.get("content") or "")})
    else:
        name = str(item.get("function") or "")
        kwargs = item.get("kwargs")
        arguments = compact(kwargs if isinstance(kwargs, dict) else {})
    return ToolCall(call_id, str(name), exact if isinstance(exact, str) else arguments)


def _observation(item: dict[str, Any], known: dict[str, str], unlinked: str | None) -> Message:
    text = str(item.get("content") or "")
    name = item.get("name") if isinstance(item.get("name"), str) else None
    call_id = item.get("tool_call_id") or (
        unlinked if item.get("source") == "environment" else None
    )
    if call_id in known:
        name = name if "name" in item else known[call_id]  # our exports say it, even when null
        return Message(role="tool", content=text, tool_call_id=str(call_id), name=name)
    if name == "system" and item.get("source") == "user":
        return Message(role="system", content=text)
    role = "assistant" if item.get("source") in ("agent", "assistant") else "user"
    return Message(role=role, content=text, name=name)


def _restore(messages: list[Message], extra: dict[str, Any]) -> list[Message]:
    """Structured content and demo flags, by message index (from `details.nap_builder`)."""
    parts = extra.get("content_parts") or {}
    demo = set(extra.get("demo") or [])
    if not parts and not demo:
        return messages
    out = []
    for index, message in enumerate(messages):
        found = parts.get(str(index))
        out.append(
            dataclasses.replace(
                message,
                content_parts=found if isinstance(found, str) else None,
                is_demo=index in demo,
            )
        )
    return out
