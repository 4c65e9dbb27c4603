"""Gemini CLI records to chat messages: session message records (`user` / `gemini` with their
`toolCalls`, each carrying its result) and `/chat save` checkpoints (the Gemini API history:
`{role: user|model, parts}`). Thought parts and `thoughts` summaries are counted, never made
content; `info` / `error` / `warning` records are what the terminal showed, not the chat."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from builder.ingest.formats.base import bump, canonical_json
from builder.ingest.formats.reconstruct import Transcript
from schemas.trajectories import Message, ToolCall

Record = dict[str, Any]


def parts_of(content: Any) -> list[Any]:
    """A `PartListUnion` (a string, one part or a list of them) as a list."""
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def parts_text(content: Any, counts: dict[str, int]) -> str:
    """The text parts of a content value, thought parts and others counted and left out."""
    texts = []
    for part in parts_of(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("thought") is True:
            bump(counts, "thought_parts")
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and not ({"functionCall", "functionResponse"} & part.keys()):
            bump(counts, f"part:{next(iter(part), '?')}")
    return "\n".join(texts)


def response_text(response: Any) -> str:
    """What a `functionResponse.response` gave the model: its `output`, else its `error`, else
    the object itself as JSON."""
    if isinstance(response, dict):
        for key in ("output", "error"):
            if isinstance(response.get(key), str):
                return str(response[key])
        return canonical_json(response)
    return "" if response is None else str(response)


def result_text(result: Any, counts: dict[str, int]) -> str:
    """A tool call's recorded result (its `functionResponse` parts and any other text)."""
    texts = []
    for part in parts_of(result):
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            texts.append(response_text(part["functionResponse"].get("response")))
        else:
            text = parts_text([part], counts)
            if text:
                texts.append(text)
    return "\n".join(texts)


def session_messages(records: Iterable[Record], counts: dict[str, int]) -> list[Message]:
    """Message records (in file order, after rewinds) as chat messages."""
    transcript = Transcript()
    for record in records:
        kind = record.get("type")
        if kind == "user":
            transcript.add(Message(role="user", content=parts_text(record.get("content"), counts)))
        elif kind == "gemini":
            _gemini(transcript, record, counts)
        else:
            bump(counts, f"skipped:{kind}")
    return transcript.finish()[0]


def _gemini(transcript: Transcript, record: Record, counts: dict[str, int]) -> None:
    text = parts_text(record.get("content"), counts)
    thoughts = record.get("thoughts")
    if isinstance(thoughts, list) and thoughts:
        bump(counts, "thoughts", len(thoughts))
    records = [c for c in record.get("toolCalls") or [] if isinstance(c, dict)]
    calls = [
        ToolCall(str(c.get("id") or f"{c.get('name')}-{n}"), str(c.get("name", "")),
                 canonical_json(c.get("args") if isinstance(c.get("args"), dict) else {}))
        for n, c in enumerate(records)
    ]  # fmt: skip
    if not text and not calls:
        bump(counts, "empty_model_turns")
        return
    transcript.add_assistant(text, calls)
    for call, raw in zip(calls, records, strict=True):
        if raw.get("result") is None:
            bump(counts, "calls_without_result")
            continue
        content = result_text(raw.get("result"), counts)
        transcript.add_result(Message("tool", content, tool_call_id=call.id, name=call.name))


def checkpoint_messages(contents: list[Any], counts: dict[str, int]) -> list[Message]:
    """A `/chat save` checkpoint (Gemini `Content` objects) as chat messages."""
    transcript = Transcript()
    pending: list[ToolCall] = []  # calls without an id are answered in order, by name
    for content in contents:
        parts = parts_of(content.get("parts")) if isinstance(content, dict) else []
        if isinstance(content, dict) and content.get("role") == "model":
            calls = []
            for part in parts:
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    name = str(call.get("name", ""))
                    args = call.get("args") if isinstance(call.get("args"), dict) else {}
                    calls.append(ToolCall(str(call.get("id") or f"{name}-{len(pending)}"), name,
                                          canonical_json(args)))  # fmt: skip
            transcript.add_assistant(parts_text(parts, counts), calls)
            pending.extend(calls)
            continue
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(response, dict):
                continue
            call = _answered(pending, response)
            content_text = response_text(response.get("response"))
            message = Message("tool", content_text, tool_call_id=call.id if call else None,
                              name=str(response.get("name") or "") or None)  # fmt: skip
            if call is None or not transcript.add_result(message):
                bump(counts, "orphan_responses")
                transcript.add(Message(role="user", content=content_text))
        text = parts_text(parts, counts)
        if text:
            transcript.add(Message(role="user", content=text))
    return transcript.finish()[0]


def _answered(pending: list[ToolCall], response: dict[str, Any]) -> ToolCall | None:
    """The pending call a function response answers: by id, else the first of its name."""
    wanted = response.get("id")
    for index, call in enumerate(pending):
        if (wanted and call.id == wanted) or (not wanted and call.name == response.get("name")):
            return pending.pop(index)
    return None
