"""OpenHands v0 events to messages: each action an assistant turn with its tool call (the real
one from `tool_call_metadata` when logged), each observation the `tool` message its `cause` or
call id answers; what only drives the controller is counted, not replayed. The adapter
(`builder.ingest.formats.openhands_v0`) reads the files and builds the record around this."""

from __future__ import annotations

from typing import Any

from builder.errors import RecordError
from builder.ingest.formats.base import canonical_json, content_text
from builder.ingest.formats.reconstruct import (
    Transcript,
    arguments_text,
    obj,
    render_command_output,
    text_message,
)
from schemas.trajectories import Message, ToolCall

ACTIONS = {
    "system", "message", "recall", "run", "run_ipython", "edit", "read", "write", "think",
    "finish", "browse", "browse_interactive", "delegate", "call_tool_mcp", "mcp",
    "change_agent_state", "reject", "condensation", "condensation_request", "task_tracking",
    "null",
}  # fmt: skip
# Events that only drive the controller; the model never sees them as turns.
SILENT_ACTIONS = {"recall", "change_agent_state", "null", "condensation", "condensation_request"}
SILENT_OBSERVATIONS = {"agent_state_changed", "null", "condensation", "recall", "delegate"}
_ARG_NOISE = {
    "thought", "impl_source", "translated_ipython_code", "is_confirmed", "security_risk",
    "confirmation_state", "keep_prompt", "action_risk", "kernel_init_code", "hidden",
    "blocking", "wait_for_response", "image_urls", "images_urls", "include_extra",
    "LLM_API_KEY", "outputs", "content", "start", "end", "source", "action", "is_input",
}  # fmt: skip
_FLAT_KEYS = {"action", "observation", "id", "timestamp", "source", "message", "cause"}


def _event_args(event: dict[str, Any]) -> dict[str, Any]:
    """`args` of a structured event, or the event itself in the flat resolver form."""
    args = event.get("args")
    if isinstance(args, dict):
        return args
    return {k: v for k, v in event.items() if k not in _FLAT_KEYS}


def _synthetic_call(kind: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) for an action logged without its tool call."""
    if kind == "run":
        return "execute_bash", {"command": args.get("command", "")}
    if kind == "run_ipython":
        return "execute_ipython_cell", {"code": args.get("code", "")}
    if kind == "think":
        return "think", {"thought": args.get("thought", "")}
    if kind == "finish":
        message = args.get("final_thought") or args.get("message")
        return "finish", {"message": message} if message else {}
    if kind == "read":
        return "str_replace_editor", _present({"command": "view", **_edit_args(args)})
    if kind == "write":
        return "str_replace_editor", _present(
            {"command": "create", "path": args.get("path"), "file_text": args.get("content")}
        )
    if kind == "edit":
        fields = _edit_args(args)
        if "command" not in fields and args.get("content"):
            fields["content"] = args["content"]  # the old LLM-based editor
        return "str_replace_editor", fields
    if kind == "browse":
        return "browser", {"url": args.get("url", "")}
    if kind == "browse_interactive":
        return "browser", {"code": args.get("browser_actions", "")}
    return kind, {k: v for k, v in args.items() if k not in _ARG_NOISE}


def _edit_args(args: dict[str, Any]) -> dict[str, Any]:
    keys = ("command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range")
    return _present({k: args.get(k) for k in keys})


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != ""}


def _response_message(event: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(response id, assistant message) of the model response behind an action, when logged."""
    meta = event.get("tool_call_metadata")
    if not isinstance(meta, dict):
        return None, None
    response = meta.get("model_response")
    if not isinstance(response, dict):
        return None, None
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, None
    message = choices[0].get("message")
    return response.get("id"), message if isinstance(message, dict) else None


def _calls_of(message: dict[str, Any]) -> list[ToolCall]:
    calls = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") or {}
        calls.append(
            ToolCall(
                id=str(raw.get("id")),
                name=str(function.get("name", "")),
                arguments=arguments_text(function.get("arguments")),
            )
        )
    return calls


def _observation_text(event: dict[str, Any]) -> str:
    extras = obj(event.get("extras"))
    formatted = extras.get("formatted_output_and_error")
    if isinstance(formatted, str) and formatted:
        return formatted
    text = content_text(event.get("content"))[0]
    metadata = extras.get("metadata")
    if event.get("observation") == "run" and isinstance(metadata, dict):
        return render_command_output(text, metadata)
    return text


class EventBuilder:
    """Walks the events of one run and keeps what the trajectory needs."""

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.call_of_event: dict[Any, str] = {}  # action event id -> tool call id
        self.open_calls: list[str] = []  # flat form: unanswered calls, oldest first
        self.responses: set[str] = set()
        self.system_prompt: str | None = None
        self.tools: str | None = None
        self.task: str | None = None
        self.finished = False
        self.version: str | None = None
        self.counts: dict[str, int] = {}

    def feed(self, index: int, event: dict[str, Any]) -> None:
        if not event:
            self._count("empty_events")
        elif "action" in event:
            self._action(index, event)
        elif "observation" in event:
            self._observation(event)
        else:
            raise RecordError(f"event {index} has neither `action` nor `observation`")

    def _count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def _action(self, index: int, event: dict[str, Any]) -> None:
        kind = str(event["action"])
        args = _event_args(event)
        if kind in SILENT_ACTIONS:
            self._count(f"skipped_action:{kind}")
            return
        if kind == "system":
            self.system_prompt = content_text(args.get("content", event.get("message")))[0]
            self.version = args.get("openhands_version") or self.version
            if args.get("tools"):
                self.tools = canonical_json(args["tools"])
            self.transcript.add(Message(role="system", content=self.system_prompt))
            return
        if kind == "message" and "tool_call_metadata" not in event:
            text = args.get("content", event.get("message", ""))
            role = "assistant" if event.get("source") == "agent" else "user"
            message = text_message(role, text)
            if role == "user" and self.task is None:
                self.task = message.content
            self.transcript.add(message)
            return
        self.finished = self.finished or kind == "finish"
        self._tool_action(index, event, kind, args)

    def _tool_action(
        self, index: int, event: dict[str, Any], kind: str, args: dict[str, Any]
    ) -> None:
        response_id, response = _response_message(event)
        meta = event.get("tool_call_metadata") or {}
        call_id = meta.get("tool_call_id") if isinstance(meta, dict) else None
        if response is not None and response_id is not None:
            if call_id is not None:
                self.call_of_event[event.get("id")] = str(call_id)
                self.open_calls.append(str(call_id))
            if response_id in self.responses:
                return  # another call of a response already written out
            self.responses.add(response_id)
            calls = _calls_of(response)
            if calls and call_id is not None and str(call_id) not in {c.id for c in calls}:
                name, arguments = _synthetic_call(kind, args)  # the response lost this call
                calls.append(
                    ToolCall(id=str(call_id), name=name, arguments=canonical_json(arguments))
                )
            if calls:
                text = content_text(response.get("content"))[0]
                self.transcript.add_assistant(text, calls)
                return
        event_id = event.get("id", index)
        name, arguments = _synthetic_call(kind, args)
        call = ToolCall(
            id=str(call_id or f"call_{event_id}"), name=name, arguments=canonical_json(arguments)
        )
        self.call_of_event[event.get("id")] = call.id
        self.open_calls.append(call.id)
        thought = args.get("thought") if kind != "think" else ""
        self.transcript.add_assistant(thought if isinstance(thought, str) else "", [call])

    def _observation(self, event: dict[str, Any]) -> None:
        kind = str(event["observation"])
        if kind in SILENT_OBSERVATIONS and not (kind == "recall" and event.get("content")):
            self._count(f"skipped_observation:{kind}")
            return
        call_id = self._call_for(event)
        text = _observation_text(event)
        if call_id is None:
            self._count(f"unpaired_observation:{kind}")
            self.transcript.add(Message(role="user", content=text))
            return
        name = self.transcript.names.get(call_id)
        self.transcript.add_result(
            Message(role="tool", content=text, tool_call_id=call_id, name=name)
        )
        if call_id in self.open_calls:
            self.open_calls.remove(call_id)

    def _call_for(self, event: dict[str, Any]) -> str | None:
        meta = event.get("tool_call_metadata")
        if isinstance(meta, dict) and self.transcript.knows(meta.get("tool_call_id")):
            return str(meta["tool_call_id"])
        if "cause" in event:
            return self.call_of_event.get(event["cause"])
        return self.open_calls[0] if self.open_calls else None  # flat form: no ids at all


def events_of(history: Any) -> list[dict[str, Any]]:
    """History as a flat event list; the oldest output files store [action, observation] pairs."""
    if not isinstance(history, list):
        raise RecordError("`history` is not a list")
    events: list[dict[str, Any]] = []
    for item in history:
        pair = item if isinstance(item, list) else [item]
        for event in pair:
            if not isinstance(event, dict):
                raise RecordError(f"history item is {type(event).__name__}, not an event object")
            events.append(event)
    return events


def looks_like_event(value: Any) -> bool:
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, dict) or "kind" in value or "role" in value:
        return False
    kind = value.get("action", value.get("observation"))
    return isinstance(kind, str) and kind in ACTIONS | SILENT_OBSERVATIONS | {"error"}


def is_output_line(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("history"), list)
        and any(k in value for k in ("instruction", "instance_id", "instance"))
        and (not value["history"] or looks_like_event(value["history"][0]))
    )
