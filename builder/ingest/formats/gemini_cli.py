"""Gemini CLI sessions (`~/.gemini/tmp/<project hash>/chats/`).

Three shapes are read (`gemini_messages` turns them into chat messages):
- `session-*.json`: one conversation record `{sessionId, projectHash, startTime, lastUpdated,
  messages}`, each `gemini` message carrying its `toolCalls` with their results;
- `session-*.jsonl` (newer versions): a metadata line, then message records appended as they
  change (a later record with the same `id` replaces the earlier one), `{"$rewindTo": id}` lines
  that drop that message and everything after it, and `{"$set": {...}}` metadata updates;
- `checkpoint-*.json` (`/chat save`): the Gemini API history, `[{role: user|model, parts}]`.

Steps: tool calls answered by their results (parallel calls keep their own); the shell command
is `run_shell_command`'s `command`. Only the command's output is compressed: the `Command:` /
`Directory:` lines before `Output:` and the `Error:` / `Exit Code:` / `Signal:` / `Background
PIDs:` / `Process Group PGID:` lines after it stay as logged. The system prompt and the
environment context Gemini CLI sends first are not in these files (`fidelity: reconstructed`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    as_count,
    bump,
    canonical_json,
    hand_over,
    quarantine,
    tool_call_action,
    trajectory_id,
)
from builder.ingest.formats.gemini_messages import checkpoint_messages, session_messages
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, TrajectoryRecord

NAME = "gemini-cli"
SHELL = "run_shell_command"
_SHELL_HEAD = re.compile(r"\A(?:Command: [^\n]*\nDirectory: [^\n]*\n)?(Output|Stdout): ")
_SHELL_TAIL = re.compile(
    r"(?:\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): [^\n]*)+\Z"
)


def _is_metadata(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
    )


def _is_checkpoint(value: Any) -> bool:
    head = value[:5] if isinstance(value, list) else []
    return bool(head) and all(
        isinstance(c, dict)
        and c.get("role") in ("user", "model")
        and isinstance(c.get("parts"), list)
        for c in head
    )


def split_shell_output(text: str) -> tuple[str, str, str]:
    """(labels before the output, the output, status lines after it) of a shell result."""
    head = _SHELL_HEAD.match(text)
    if head is None:
        return "", text, ""
    start = head.end()
    stderr = text.find("\nStderr: ", start)
    if head.group(1) == "Stdout" and stderr != -1:
        return text[:start], text[start:stderr], text[stderr:]
    tail = _SHELL_TAIL.search(text, start)
    end = tail.start() if tail else len(text)
    return text[:start], text[start:end], text[end:]


def replay_records(lines: Iterator[tuple[int, Any]]) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """(metadata, message records, problems) of a JSONL session, rewinds and updates applied
    the way Gemini CLI loads it."""
    metadata: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    problems: list[Any] = []
    for index, value in lines:
        if isinstance(value, InputError):
            problems.append((index, value))
        elif isinstance(value, dict) and isinstance(value.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(value["$rewindTo"]) if value["$rewindTo"] in ids else 0
            for message_id in ids[cut:]:
                del messages[message_id]
            bump(metadata.setdefault("_counts", {}), "rewinds")
        elif isinstance(value, dict) and isinstance(value.get("id"), str):
            messages[value["id"]] = value
        elif isinstance(value, dict) and isinstance(value.get("$set"), dict):
            metadata.update(value["$set"])
        elif _is_metadata(value):
            metadata.update(value)
        else:
            problems.append((index, RecordError(f"line {index + 1}: not a session record")))
    return metadata, list(messages.values()), problems


class GeminiCliAdapter(BaseAdapter):
    name = NAME
    harness = "gemini-cli"

    def detect(self, source: Source) -> bool:
        if source.is_jsonl:
            return _is_metadata(source.first_value())
        document = source.json_document()
        if isinstance(document, dict):
            return _is_metadata(document) and isinstance(document.get("messages"), list)
        return _is_checkpoint(document)

    def load(self, source: Source) -> Iterator[LoadResult]:
        if source.is_jsonl:
            yield from self._load_jsonl(source)
            return
        box: list[LoadResult] = []
        try:
            document = source.document()
            if isinstance(document, dict) and _is_metadata(document):
                records = [m for m in document.get("messages") or [] if isinstance(m, dict)]
                box.append(self._record(source, document, records=records))
            elif _is_checkpoint(document):
                box.append(self._record(source, {}, contents=document))
            else:
                raise RecordError(f"{source.name}: not a Gemini CLI session or checkpoint")
        except InputError as exc:
            box.append(quarantine(source, None, NAME, exc))
        source.release()  # the record alone holds the text now (see FormatAdapter.load)
        yield from hand_over(box)

    def _load_jsonl(self, source: Source) -> Iterator[LoadResult]:
        metadata, records, problems = replay_records(source.lines())
        for index, error in problems:
            yield quarantine(source, index, NAME, _named(source, error))
        if not _is_metadata(metadata):
            error = RecordError(f"{source.name}: no session line (`sessionId`, `projectHash`)")
            yield quarantine(source, None, NAME, error)
            return
        listed = metadata.get("messages")
        if isinstance(listed, list) and listed:  # a legacy record migrated whole
            records = [m for m in listed if isinstance(m, dict)]
        try:
            yield self._record(source, metadata, records=records)
        except RecordError as exc:
            yield quarantine(source, None, NAME, exc)

    def _record(
        self,
        source: Source,
        meta: dict[str, Any],
        *,
        records: list[dict[str, Any]] | None = None,
        contents: list[Any] | None = None,
    ) -> TrajectoryRecord:
        counts: dict[str, int] = dict(meta.get("_counts") or {})
        if records is not None:
            messages = session_messages(records, counts)
        else:
            messages = checkpoint_messages(contents or [], counts)
        if not any(m.role == "assistant" for m in messages):
            raise RecordError(f"{source.name}: no model turn in the session")
        models = [r.get("model") for r in records or [] if isinstance(r.get("model"), str)]
        tokens = [r["tokens"] for r in records or [] if isinstance(r.get("tokens"), dict)]
        native_id = meta.get("sessionId")
        metadata = {
            "session_id": native_id,
            "project_hash": meta.get("projectHash"),
            "start_time": meta.get("startTime"),
            "last_updated": meta.get("lastUpdated"),
            "summary": meta.get("summary"),
            "kind": meta.get("kind"),
            "directories": meta.get("directories"),
            "shape": "checkpoint" if contents is not None else "session",
            "counts": counts,
        }
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, native_id, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=0,
            native_id=native_id,
            harness=self.harness,
            harness_version=None,
            agent_model=models[0] if models else None,
            task=next((m.content for m in messages if m.role == "user" and m.content), None),
            system_prompt=None,
            tools=None,
            messages=messages,
            prompt_tokens=_total(tokens, "input"),
            completion_tokens=_total(tokens, "output"),
            api_calls=len(tokens) or None,
            fidelity=FIDELITY_RECONSTRUCTED,
            is_sidechain=meta.get("kind") == "subagent",
            metadata=canonical_json(metadata),
        )

    def parse_action(self, message: Message) -> list[Action]:
        """Tool calls; `run_shell_command`'s `command` is the shell command."""
        actions = []
        for call in message.tool_calls:
            action = tool_call_action(call.name, call.arguments)
            if call.name == SHELL:
                command = json.loads(action.arguments).get("command")
                action = replace(action, command=command if isinstance(command, str) else None)
            actions.append(action)
        return actions

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        if message.role == "tool" and message.name == SHELL:
            return split_shell_output(message.content)
        return "", message.content, ""


def _total(tokens: list[dict[str, Any]], key: str) -> int | None:
    values = [as_count(t.get(key)) for t in tokens]
    found = [v for v in values if v is not None]
    return sum(found) if found else None


def _named(source: Source, error: Any) -> InputError:
    if isinstance(error, InputError) and str(error).startswith(source.name):
        return error
    return RecordError(f"{source.name} {error}")


ADAPTER = GeminiCliAdapter()
