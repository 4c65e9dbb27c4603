"""Rebuilding an OpenAI-shape chat from event logs (OpenHands, Claude Code, ATIF).

Event formats log actions and observations as separate records linked by ids. `Transcript`
turns them back into assistant messages with tool calls followed by `tool` messages answering
those calls, pairing by id (never by position alone), so the steps builder can rely on the
invariant: every tool message answers a call of the assistant message before its tool block.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from builder.ingest.formats.base import canonical_json, content_text
from schemas.trajectories import Message, ToolCall

# Status lines OpenHands appends to tool output; the steps builder must not compress them.
_OPENHANDS_TRAILER = re.compile(
    r"(?:\n*\[(?:The command completed|The command has no new output|Command finished|"
    r"Command timed out|Current working directory|Python interpreter|Jupyter current working "
    r"directory|Jupyter Python interpreter|The command timed out)[^\n]*\]\s*)+\Z"
)


def split_openhands_trailer(text: str) -> tuple[str, str, str]:
    """(prefix, payload, suffix): the status lines OpenHands appends to output are the suffix."""
    match = _OPENHANDS_TRAILER.search(text)
    if match is None or match.start() == 0:
        return "", text, ""
    return "", text[: match.start()], text[match.start() :]


def status_only(text: str) -> bool:
    """Whether `text` is nothing but OpenHands' status lines: a command that printed nothing
    (`split_openhands_trailer` keeps such a text whole, as the payload)."""
    match = _OPENHANDS_TRAILER.search(text)
    return match is not None and not text[: match.start()].strip()


def render_command_output(content: str, metadata: dict[str, Any]) -> str:
    """Shell output as OpenHands shows it to the model (v0 `to_agent_observation`, SDK
    `to_llm_content`): prefix + output + suffix, then working directory, interpreter and exit
    code lines. Events store the parts separately."""
    text = f"{metadata.get('prefix') or ''}{content}{metadata.get('suffix') or ''}"
    if metadata.get("working_dir"):
        text += f"\n[Current working directory: {metadata['working_dir']}]"
    if metadata.get("py_interpreter_path"):
        text += f"\n[Python interpreter: {metadata['py_interpreter_path']}]"
    exit_code = metadata.get("exit_code")
    if isinstance(exit_code, int) and exit_code != -1:
        text += f"\n[Command finished with exit code {exit_code}]"
    return text


def arguments_text(value: Any) -> str:
    """Tool-call arguments as JSON object text: a logged JSON string is kept verbatim."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return canonical_json({"_raw": value})
        return value if isinstance(parsed, dict) else canonical_json({"_value": parsed})
    if isinstance(value, dict):
        return canonical_json(value)
    if value is None:
        return "{}"
    return canonical_json({"_value": value})


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (logs leave fields null or out)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """A token count or similar: ints only (a float or string in a log is not trusted)."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def text_message(role: str, content: Any, name: str | None = None) -> Message:
    """A message from a string or a list of content parts (the parts are kept as JSON)."""
    text, parts = content_text(content)
    return Message(role=role, content=text, name=name, content_parts=parts)


@dataclass
class _Slot:
    """A tool result seen before its call (kept in place until the call shows up)."""

    call_id: str
    message: Message


@dataclass
class Transcript:
    """Messages under construction, with tool results paired to their calls by id."""

    items: list[Message | _Slot] = field(default_factory=list)
    owner: dict[str, int] = field(default_factory=dict)  # call id -> id() of its assistant
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name

    def add(self, message: Message) -> None:
        self.items.append(message)

    def add_assistant(self, content: str, calls: list[ToolCall], parts: str | None = None) -> None:
        """An assistant turn; results that arrived before their call are moved right after it."""
        message = Message(role="assistant", content=content, tool_calls=calls, content_parts=parts)
        self.items.append(message)
        for call in calls:
            self.owner[call.id] = id(message)
            self.names[call.id] = call.name
        for call in calls:
            early = self._take_slot(call.id)
            if early is not None:
                self._attach(replace(early, name=early.name or call.name))

    def knows(self, call_id: str | None) -> bool:
        return call_id is not None and call_id in self.owner

    def add_result(self, message: Message, *, defer: bool = False) -> bool:
        """Place a tool message after its call's assistant turn. False when the call is unknown
        (with `defer`, the result waits in place for a later call; see `finish`)."""
        call_id = message.tool_call_id
        if call_id is None or call_id not in self.owner:
            if defer and call_id is not None:
                self.items.append(_Slot(call_id, message))
                return True
            return False
        self._attach(message)
        return True

    def finish(self) -> tuple[list[Message], int]:
        """The messages, and how many deferred results never met their call (kept as user
        messages where they were logged)."""
        out: list[Message] = []
        orphans = 0
        for item in self.items:
            if isinstance(item, _Slot):
                orphans += 1
                out.append(replace(item.message, role="user", tool_call_id=None))
            else:
                out.append(item)
        return out, orphans

    def _take_slot(self, call_id: str) -> Message | None:
        for index, item in enumerate(self.items):
            if isinstance(item, _Slot) and item.call_id == call_id:
                del self.items[index]
                return item.message
        return None

    def _attach(self, message: Message) -> None:
        call_id = message.tool_call_id or ""
        owner = self.owner[call_id]
        index = next(i for i in range(len(self.items) - 1, -1, -1) if id(self.items[i]) == owner)
        position = index + 1
        while position < len(self.items):
            item = self.items[position]
            if not isinstance(item, Message) or item.role != "tool":
                break
            if item.tool_call_id == call_id:  # a second result for one call: append to it
                merged = f"{item.content}\n{message.content}" if item.content else message.content
                self.items[position] = replace(item, content=merged)
                return
            position += 1
        self.items.insert(position, message)
