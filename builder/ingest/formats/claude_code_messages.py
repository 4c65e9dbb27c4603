"""Claude Code records to chat messages: the records of one API message merged into one
assistant turn (text parts the content, `tool_use` parts the calls, `thinking` parts only
counted), each `tool_result` part a `tool` message answering its `tool_use_id`. The adapter
(`builder.ingest.formats.claude_code`) orders the records and builds the trajectory around this."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builder.ingest.formats.base import (
    as_count,
    canonical_json,
    content_text,
)
from builder.ingest.formats.reconstruct import Transcript
from schemas.trajectories import Message, ToolCall

Record = dict[str, Any]


def is_local(text: str) -> bool:
    """Slash commands and their local output are typed in the CLI, not a task for the model."""
    return text.lstrip().startswith(("<command-", "<local-command-"))


def parts_of(record: Record) -> list[Any]:
    content = record["message"].get("content")
    if isinstance(content, list):
        return content
    return [] if content is None else [content]


def tool_results(record: Record) -> list[dict[str, Any]]:
    if record.get("type") != "user":
        return []
    return [p for p in parts_of(record) if isinstance(p, dict) and p.get("type") == "tool_result"]


@dataclass
class Assembler:
    """Turns ordered records into chat messages."""

    transcript: Transcript = field(default_factory=Transcript)
    message_id: str | None = None
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    buffered: list[Message] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    task: str | None = None
    cost: float = 0.0

    def add(self, record: Record) -> None:
        if record["type"] == "assistant":
            self._assistant(record)
        else:
            self._user(record)

    def finish(self) -> list[Message]:
        self._flush()
        messages, orphans = self.transcript.finish()
        if orphans:
            self._count("orphan_tool_results", orphans)
        return messages

    def _count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def _assistant(self, record: Record) -> None:
        message = record["message"]
        message_id = message.get("id")
        if message_id is None or message_id != self.message_id:
            self._flush()
            self.message_id = message_id
        if self.model is None and message.get("model") not in (None, "<synthetic>"):
            self.model = message["model"]
        if isinstance(record.get("costUSD"), int | float):
            self.cost += record["costUSD"]
        self._usage(str(message_id), message.get("usage"))
        for part in parts_of(record):
            kind = part.get("type") if isinstance(part, dict) else "text"
            if isinstance(part, str):
                self.texts.append(part)
            elif kind == "text":
                self.texts.append(str(part.get("text", "")))
            elif kind == "tool_use":
                call = ToolCall(
                    id=str(part.get("id")),
                    name=str(part.get("name", "")),
                    arguments=canonical_json(part.get("input") or {}),
                )
                self.names[call.id] = call.name
                self.calls.append(call)
            else:
                self._count(f"assistant_part:{kind}")

    def _usage(self, message_id: str, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        prompt = sum(
            as_count(usage.get(k)) or 0
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        seen = self.usage.setdefault(message_id, {"prompt": 0, "completion": 0})
        seen["prompt"] = max(seen["prompt"], prompt)
        seen["completion"] = max(seen["completion"], as_count(usage.get("output_tokens")) or 0)

    def _user(self, record: Record) -> None:
        content = record["message"].get("content")
        if isinstance(content, str):
            self._flush()
            self.transcript.add(Message(role="user", content=content))
            if self.task is None and not record.get("isMeta") and not is_local(content):
                self.task = content
            return
        others = []
        for part in parts_of(record):
            if isinstance(part, dict) and part.get("type") == "tool_result":
                self._result(part)
            else:
                others.append(part)
        if others:
            self._flush()
            text, parts = content_text(others)
            self.transcript.add(Message(role="user", content=text, content_parts=parts))
            if self.task is None and text and not record.get("isMeta"):
                self.task = text

    def _result(self, part: dict[str, Any]) -> None:
        call_id = str(part.get("tool_use_id"))
        text, parts = content_text(part.get("content"))
        message = Message(
            role="tool",
            content=text,
            tool_call_id=call_id,
            name=self.names.get(call_id),
            content_parts=parts,
        )
        if any(c.id == call_id for c in self.calls):
            self.buffered.append(message)
        elif not self.transcript.add_result(message):
            self._count("orphan_tool_results")
            self.transcript.add(Message(role="user", content=text, content_parts=parts))

    def _flush(self) -> None:
        if self.texts or self.calls:
            self.transcript.add_assistant("\n".join(t for t in self.texts if t), self.calls)
            for message in self.buffered:
                self.transcript.add_result(message)
        self.texts, self.calls, self.buffered = [], [], []
        self.message_id = None
