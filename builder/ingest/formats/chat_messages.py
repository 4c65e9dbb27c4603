"""`chat-messages`: JSONL fine-tuning rows `{instance_id?, messages[{role, content}], ...}`.

The shape of the SWE-smith, SWE-Gym and nebius trajectory datasets. Each line is one
trajectory; a bad line becomes a quarantine row and the other lines go on. Actions are, in
order of preference: OpenAI `tool_calls`; XML `<function=NAME><parameter=K>V</parameter>` calls
in the assistant text; fenced ```bash blocks. Observations are `tool` messages or user messages
starting `OBSERVATION:` (the marker stays out of the payload).

`record_from_row` is the reusable part: `hf_dataset` turns each dataset row into a trajectory
with it, under a `ColumnMapping`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats import grammars
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    canonical_json,
    content_text,
    quarantine,
    tool_call_action,
    trajectory_id,
)
from builder.ingest.formats.deployed_output import raw_output_of
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import Message, ToolCall, TrajectoryRecord

STANDARD_ROLES = frozenset({"system", "user", "assistant", "tool"})
# Non-OpenAI role names of public datasets (ShareGPT, nebius); standard roles are never renamed.
ROLE_ALIASES = {"human": "user", "gpt": "assistant", "ai": "assistant", "model": "assistant"}


@dataclass(frozen=True)
class ColumnMapping:
    """Where a row keeps its messages, id and message fields (defaults: the OpenAI names)."""

    messages: str = "messages"
    id: str = "instance_id"
    role_key: str = "role"
    content_key: str = "content"
    model: str | None = None  # column naming the agent model, if any
    resolved: str | None = None  # boolean (or 0/1) column saying whether the run solved its task
    tools: str = "tools"  # column of the tool schemas the agent had

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ColumnMapping:
        known = {k: v for k, v in options.items() if k in cls.__dataclass_fields__}
        bad = [k for k, v in known.items() if v is not None and not isinstance(v, str)]
        if bad:
            raise InputError(f"column mapping option(s) {bad} must be strings", kind="bad_option")
        return cls(**known)


def parse_tool_calls(value: Any, where: str) -> list[ToolCall]:
    """OpenAI `tool_calls` as ToolCalls; arguments stay the JSON text the model wrote."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(f"{where}: tool_calls is {type(value).__name__}, expected a list")
    calls = []
    for j, call in enumerate(value):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise RecordError(f"{where}: tool_calls[{j}] has no function name")
        args = fn.get("arguments", "")
        args_text = args if isinstance(args, str) else canonical_json(args)
        calls.append(ToolCall(id=str(call.get("id") or ""), name=fn["name"], arguments=args_text))
    return calls


def parse_message(
    raw: Any,
    where: str,
    *,
    role_key: str = "role",
    content_key: str = "content",
    is_demo: bool = False,
) -> Message:
    """One chat message dict as a `Message`; a wrong shape raises `RecordError` naming `where`."""
    if not isinstance(raw, dict):
        raise RecordError(f"{where}: message is {type(raw).__name__}, expected an object")
    role = raw.get(role_key)
    if not isinstance(role, str):
        raise RecordError(f"{where}: message has no string {role_key!r}")
    if role not in STANDARD_ROLES:
        role = ROLE_ALIASES.get(role.lower(), role)
    content = raw.get(content_key)
    if content is not None and not isinstance(content, (str, list)):
        raise RecordError(f"{where}: {content_key!r} is {type(content).__name__}")
    text, parts = content_text(content)
    tool_call_id = raw.get("tool_call_id")
    if tool_call_id is None and isinstance(raw.get("tool_call_ids"), list) and raw["tool_call_ids"]:
        tool_call_id = raw["tool_call_ids"][0]  # SWE-agent 1.x keeps a list
    name = raw.get("name")
    return Message(
        role=role,
        content=text,
        tool_calls=parse_tool_calls(raw.get("tool_calls"), where),
        tool_call_id=str(tool_call_id) if tool_call_id is not None else None,
        name=name if isinstance(name, str) else None,
        content_parts=parts,
        is_demo=is_demo or raw.get("is_demo") is True,
        raw_output=raw_output_of(raw, where),
    )


def parse_messages(value: Any, where: str, mapping: ColumnMapping | None = None) -> list[Message]:
    """A message list (or its JSON text, as some datasets store it) as `Message`s."""
    mapping = mapping or ColumnMapping()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{where}: messages is a string but not JSON ({exc.msg})") from exc
    if not isinstance(value, list):
        raise RecordError(f"{where}: messages is {type(value).__name__}, expected a list")
    if not value:
        raise RecordError(f"{where}: messages is empty")
    return [
        parse_message(
            m, f"{where} message {i}", role_key=mapping.role_key, content_key=mapping.content_key
        )
        for i, m in enumerate(value)
    ]


_PR_DESCRIPTION = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.DOTALL)
_PR_LEAD = "Consider the following PR description:\n"


def task_from_messages(messages: list[Message]) -> str | None:
    """The task: the text inside <pr_description> of the first user message, else that message."""
    first_user = next((m for m in messages if m.role == "user" and not m.is_demo), None)
    if first_user is None:
        return None
    match = _PR_DESCRIPTION.search(first_user.content)
    if match is None:
        return first_user.content
    task = match.group(1)
    return task[len(_PR_LEAD) :] if task.startswith(_PR_LEAD) else task


def system_prompt(messages: list[Message]) -> str | None:
    return next((m.content for m in messages if m.role == "system"), None)


def _scalar_metadata(row: Mapping[str, Any], skip: set[str]) -> dict[str, Any]:
    """The row's other scalar columns: kept for provenance, never interpreted."""
    return {
        k: v
        for k, v in row.items()
        if k not in skip and (v is None or isinstance(v, (str, int, float, bool)))
    }


def tools_json(value: Any, where: str) -> str | None:
    """The row's `tools` (OpenAI fine-tuning JSONL puts the tool schemas beside `messages`).

    Replay sends them with every agent request, as the harness did; a list (of schemas or of
    their JSON texts) or its JSON text is accepted, anything else is a broken record rather than
    silently dropped tools."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{where}: 'tools' is not valid JSON ({exc.msg})") from None
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        try:  # some datasets store each schema as its own JSON text
            value = [json.loads(t) for t in value]
        except json.JSONDecodeError as exc:
            raise RecordError(f"{where}: a 'tools' entry is not valid JSON ({exc.msg})") from None
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise RecordError(f"{where}: 'tools' must be a list of tool schemas (objects)")
    return canonical_json([_without_nulls(t) for t in value]) if value else None


def _without_nulls(value: Any) -> Any:
    """A schema with its null-valued keys left out: Parquet stores a list of tool schemas as
    structs that give every schema every key any of them has, absent ones as null."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def record_from_row(
    row: Any, *, source: Source, index: int, fmt: str, mapping: ColumnMapping | None = None
) -> LoadResult:
    """One message-list row as a trajectory, or a quarantine row naming file, index and cause."""
    mapping = mapping or ColumnMapping()
    where = f"{source.name} record {index}"
    try:
        if not isinstance(row, Mapping):
            raise RecordError(f"{where}: row is {type(row).__name__}, expected an object")
        if mapping.messages not in row:
            raise RecordError(f"{where}: no {mapping.messages!r} column (keys: {sorted(row)[:10]})")
        messages = parse_messages(row[mapping.messages], where, mapping)
        tools = tools_json(row.get(mapping.tools), where)
    except RecordError as exc:
        return quarantine(source, index, fmt, exc)
    native = row.get(mapping.id)
    native_id = str(native) if native is not None else None
    model = row.get(mapping.model) if mapping.model else None
    resolved = row.get(mapping.resolved) if mapping.resolved else None
    skip = {mapping.messages, mapping.id, mapping.tools}
    return TrajectoryRecord(
        trajectory_id=trajectory_id(fmt, native_id, messages),
        source_format=fmt,
        source_path=source.name,
        record_index=index,
        native_id=native_id,
        harness=ChatMessagesAdapter.harness,
        harness_version=None,
        agent_model=str(model) if model is not None else None,
        task=task_from_messages(messages),
        system_prompt=system_prompt(messages),
        tools=tools,
        messages=messages,
        resolved=_flag(resolved),
        metadata=canonical_json(_scalar_metadata(row, skip)),
    )


def _flag(value: Any) -> bool | None:
    """A resolved flag: a bool, or the 0/1 integer some datasets store."""
    if isinstance(value, bool):
        return value
    return bool(value) if isinstance(value, int) and value in (0, 1) else None


def parse_chat_action(message: Message) -> list[Action]:
    """tool_calls, else XML function calls, else fenced ```bash blocks."""
    if message.tool_calls:
        return [tool_call_action(c.name, c.arguments) for c in message.tool_calls]
    return grammars.xml_function_calls(message.content) or grammars.bash_blocks(message.content)


_OBSERVATION_PREFIX = re.compile(
    r"\A(?:OBSERVATION:|Observation:|EXECUTION RESULT of \[[^\]\n]+\]:)[ \t]*(?:\r?\n)?"
)


def split_marked_observation(content: str) -> tuple[str, str, str]:
    """`OBSERVATION:\\n` (exact whitespace as written) is the prefix, the rest the payload."""
    match = _OBSERVATION_PREFIX.match(content)
    if match is None:
        return "", content, ""
    return match.group(0), content[match.end() :], ""


def _looks_like_messages(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    head = value[:5]
    return all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in head) and all(
        "content" in m for m in head
    )


class ChatMessagesAdapter(BaseAdapter):
    name = "chat-messages"
    harness = "chat-messages"
    text_replies = True

    def detect(self, source: Source) -> bool:
        if not source.is_file or not source.is_jsonl:
            return False
        first = source.first_value()
        return isinstance(first, dict) and _looks_like_messages(first.get("messages"))

    def load(self, source: Source) -> Iterator[LoadResult]:
        for index, value in source.lines():
            if isinstance(value, InputError):
                yield quarantine(source, index, self.name, value)
                continue
            yield record_from_row(value, source=source, index=index, fmt=self.name)

    def parse_action(self, message: Message) -> list[Action]:
        return parse_chat_action(message)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_marked_observation(message.content)


ADAPTER = ChatMessagesAdapter()
