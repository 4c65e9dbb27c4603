"""Cline and Roo Code task histories (`tasks/<id>/api_conversation_history.json`).

The file is the Anthropic-format message list the extension sends (the system prompt is not in
it: `fidelity: reconstructed`). Two tool styles are read: XML tool uses written in the
assistant's text (`<execute_command><command>...`; the reply is a user turn starting
`[execute_command for '...'] Result:`), and native `tool_use` / `tool_result` blocks (each
result a `tool` message, the text blocks beside it a user message). Either way the extension
answers every turn, and a turn without a tool gets `[ERROR] You did not use a tool...`: a
format error (`text_replies`). Thinking blocks are counted, not content.

The harness is `roo-code` when the file shows Roo Code (its own tools, a mode slug in the
environment details, condensing marks, a `roo-cline` path), else `cline`. A Roo Code condense
(`isSummary`) ends a context window: messages it hid (`condenseParent`) are not seen again, so
each window is its own trajectory. Cline's own context truncation is kept in another file; a
history that was truncated replays in full.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    bump,
    canonical_json,
    content_text,
    hand_over,
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.cline_grammar import (
    ROO_ONLY_TOOLS,
    SHELL,
    is_roo_text,
    split_result,
    xml_tool_use,
)
from builder.ingest.formats.reconstruct import Transcript
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, ToolCall, TrajectoryRecord

NAME = "cline"
HISTORY_FILE = "api_conversation_history.json"
_MARKERS = ("<task>", "<environment_details>", "] Result:")
_TASK = re.compile(r"<task>\s*(.*?)\s*</task>", re.DOTALL)
_MODEL = re.compile(r"<model>([^<\n]+)</model>")
Raw = dict[str, Any]


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [] if content is None else [content]


def _texts(raw_messages: list[Raw]) -> Iterator[str]:
    for raw in raw_messages:
        for block in _blocks(raw.get("content")):
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]


def looks_like_history(value: Any, name: str) -> bool:
    """A list of `{role: user|assistant, content}` with Cline's marks in its first user turns
    (or the file name Cline gives it)."""
    head = value[:6] if isinstance(value, list) else []
    if not head or not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m
        for m in head
    ):
        return False
    users = [m for m in head if m["role"] == "user"][:3]
    return name == HISTORY_FILE or any(k in t for t in _texts(users) for k in _MARKERS)


def convert(raw_messages: list[Raw], counts: dict[str, int]) -> list[Message]:
    """Anthropic-format messages as chat messages (tool results paired to their calls)."""
    transcript = Transcript()
    for raw in raw_messages:
        texts: list[str] = []
        if raw.get("role") == "assistant":
            calls = []
            for block in _blocks(raw.get("content")):
                kind = block.get("type") if isinstance(block, dict) else "text"
                if kind == "tool_use":
                    calls.append(ToolCall(str(block.get("id")), str(block.get("name", "")),
                                          canonical_json(block.get("input") or {})))  # fmt: skip
                elif kind == "text":
                    texts.append(block if isinstance(block, str) else str(block.get("text", "")))
                else:
                    bump(counts, f"assistant_part:{kind}")
            transcript.add_assistant("\n".join(texts), calls)
            continue
        for block in _blocks(raw.get("content")):
            kind = block.get("type") if isinstance(block, dict) else "text"
            if kind == "tool_result":
                call_id = str(block.get("tool_use_id"))
                text, _ = content_text(block.get("content"))
                result = Message(
                    "tool", text, tool_call_id=call_id, name=transcript.names.get(call_id)
                )
                if not transcript.add_result(result):
                    bump(counts, "orphan_tool_results")
                    texts.append(text)
            elif kind == "text":
                texts.append(block if isinstance(block, str) else str(block.get("text", "")))
            else:
                bump(counts, f"user_part:{kind}")
        if texts:
            transcript.add(Message(role="user", content="\n".join(texts)))
    return transcript.finish()[0]


def windows(raw_messages: list[Raw]) -> list[list[Raw]]:
    """The context windows of a history: each Roo Code condense summary (`isSummary`) starts a
    new one holding what the condense kept (messages without `condenseParent`)."""
    found: list[list[Raw]] = []
    current: list[Raw] = []
    for raw in raw_messages:
        if raw.get("isSummary") is True:
            found.append(current)
            current = [m for m in current if not m.get("condenseParent")]
        current.append(raw)
    found.append(current)
    return found


class ClineAdapter(BaseAdapter):
    name = NAME
    harness = "cline"
    text_replies = True

    def detect(self, source: Source) -> bool:
        return looks_like_history(source.json_document(), source.path.name)

    def load(self, source: Source) -> Iterator[LoadResult]:
        box: list[LoadResult] = []
        try:
            document = source.document()
            if not looks_like_history(document, source.path.name):
                raise RecordError(f"{source.name}: not a Cline / Roo Code message history")
            box.extend(self._records(source, document))
        except InputError as exc:
            box.append(quarantine(source, None, NAME, exc))
        source.release()  # the records alone hold the text now (see FormatAdapter.load)
        yield from hand_over(box)

    def _records(self, source: Source, raw_messages: list[Raw]) -> Iterator[LoadResult]:
        harness = _harness(source, raw_messages)
        model = _model(source, raw_messages)
        parts = windows(raw_messages)
        kept = 0
        for number, part in enumerate(parts):
            counts: dict[str, int] = {}
            messages = convert(part, counts)
            if not any(m.role == "assistant" for m in messages):
                continue
            task_id = source.path.parent.name if source.path.name == HISTORY_FILE else None
            native_id = task_id if number == 0 or task_id is None else f"{task_id}:{number}"
            first = next((m.content for m in messages if m.role == "user"), None)
            task = _TASK.search(first) if first else None
            metadata = {
                "task_id": task_id,
                "window": number,
                "windows": len(parts),
                "counts": counts,
            }
            yield TrajectoryRecord(
                trajectory_id=trajectory_id(NAME, native_id, messages),
                source_format=NAME,
                source_path=source.name,
                record_index=kept,
                native_id=native_id,
                harness=harness,
                harness_version=None,
                agent_model=model,
                task=task.group(1) if task else first,
                system_prompt=None,
                tools=None,
                messages=messages,
                fidelity=FIDELITY_RECONSTRUCTED,
                metadata=canonical_json(metadata),
            )
            kept += 1
        if not kept:
            raise RecordError(f"{source.name}: no assistant turn in the history")

    def parse_action(self, message: Message) -> list[Action]:
        """Native tool calls, else the XML tool use in the text."""
        if message.tool_calls:
            actions = []
            for call in message.tool_calls:
                arguments = json.loads(call.arguments or "{}")
                command = arguments.get("command") if call.name == SHELL else None
                raw = canonical_json({"name": call.name, "arguments": arguments})
                command = command if isinstance(command, str) else None
                actions.append(Action(call.name, canonical_json(arguments), command, raw))
            return actions
        return xml_tool_use(message.content)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_result(message.content)


def _harness(source: Source, raw_messages: list[Raw]) -> str:
    if "roo-cline" in str(source.path).lower():  # the extension's storage folder
        return "roo-code"
    for raw in raw_messages:
        if raw.get("isSummary") or raw.get("condenseParent"):
            return "roo-code"
        for block in _blocks(raw.get("content")):
            if isinstance(block, dict) and block.get("name") in ROO_ONLY_TOOLS:
                return "roo-code"
    return "roo-code" if any(is_roo_text(t) for t in _texts(raw_messages)) else "cline"


def _model(source: Source, raw_messages: list[Raw]) -> str | None:
    """The model: Roo Code names it in the environment details; Cline in the task's
    `task_metadata.json` beside the history."""
    for text in _texts(raw_messages[:2]):
        found = _MODEL.search(text)
        if found:
            return found.group(1)
    sidecar = source.path.parent / "task_metadata.json"
    try:
        usage = json.loads(Path(sidecar).read_text(encoding="utf-8")).get("model_usage")
    except (OSError, ValueError, AttributeError):
        return None
    first = usage[0] if isinstance(usage, list) and usage else None
    model = first.get("model_id") if isinstance(first, dict) else None
    return model if isinstance(model, str) else None


ADAPTER = ClineAdapter()
