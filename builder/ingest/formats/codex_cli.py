"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Two layouts are read: `{timestamp, type, payload}` lines (`session_meta`, `turn_context`,
`response_item`, `event_msg`, `compacted`), and the older one of Codex 0.2x-0.3x (a bare
session line `{id, timestamp, instructions}`, `{"record_type": "state"}` lines, bare response
items). The chat is rebuilt from the response items alone (`codex_items`): `event_msg` lines are
what the terminal showed, used here only for the task and the token counts. Each context window
(split at `compacted` lines) is one trajectory, `native_id` `<session>` then `<session>:<n>`.

Steps: tool calls answered by their outputs (parallel calls keep their own). The shell command is
lifted from `shell` (argv, `bash -lc` unwrapped), `shell_command`, `exec_command` and
`local_shell`; `apply_patch` and the rest are tool actions. Only the output is compressed: the
`Exit code: / Wall time: / Output:` header, and the `{"output": ..., "metadata": ...}` object of
older versions, stay as logged (`with_payload` re-encodes the object around a new output).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    as_count,
    bump,
    canonical_json,
    quarantine,
    tool_call_action,
    trajectory_id,
)
from builder.ingest.formats.codex_items import (
    Segmenter,
    is_injected,
    shell_command,
    text_of,
    tool_groups,
)
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, TrajectoryRecord

NAME = "codex-cli"
ROLLOUT_TYPES = (
    "session_meta", "response_item", "compacted", "turn_context", "event_msg", "world_state",
    "inter_agent_communication", "inter_agent_communication_metadata",
)  # fmt: skip
_DETECT_LINES = 40
LEGACY_META = frozenset({"id", "timestamp", "instructions"})
LEGACY_ITEMS = ("message", "reasoning", "function_call", "function_call_output", "local_shell_call")
_HEADER = re.compile(
    r"\A((?:(?:Exit code|Wall time|Total output lines|Chunk ID|Original token count|"
    r"Process exited with code|Process running with session ID)\b[^\n]*\n){1,8}Output:\n)"
)


def entry(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(kind, payload) of one rollout line in either layout, None for anything else."""
    if not isinstance(value, dict):
        return None
    kind, payload = value.get("type"), value.get("payload")
    if "record_type" in value:
        return "state", value
    if kind in ROLLOUT_TYPES and isinstance(payload, dict):
        return str(kind), payload
    if kind is None and "id" in value and "timestamp" in value:
        return "session_meta", value  # the older layout's first line
    if isinstance(kind, str) and "payload" not in value:
        return "response_item", value  # the older layout's bare items
    return None


def envelope(text: str) -> dict[str, Any] | None:
    """The `{"output": ..., "metadata": ...}` object of an older shell output, when `text` is
    exactly its compact JSON (so it can be written back byte for byte)."""
    if not text.startswith('{"output":'):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    return value if _compact(value) == text else None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CodexCliAdapter(BaseAdapter):
    name = NAME
    harness = "codex-cli"

    def detect(self, source: Source) -> bool:
        if not source.is_jsonl:
            return False
        legacy = False
        typed = 0
        try:
            for count, (_, value) in enumerate(source.lines()):
                if count >= _DETECT_LINES:
                    break
                if not isinstance(value, dict):
                    continue
                kind = value.get("type")
                if count == 0 and kind is None and value.keys() >= LEGACY_META:
                    legacy = True
                elif legacy and ("record_type" in value or kind in LEGACY_ITEMS):
                    return True
                elif kind in ROLLOUT_TYPES and isinstance(value.get("payload"), dict):
                    typed += 1
                    if kind == "session_meta" or typed >= 3:
                        return True
        except (InputError, OSError):
            return False
        return False

    def load(self, source: Source) -> Iterator[LoadResult]:
        entries: list[tuple[str, dict[str, Any]]] = []
        unknown = 0
        try:
            for index, value in source.lines():
                if isinstance(value, InputError):
                    yield quarantine(source, index, NAME, value)
                    continue
                found = entry(value)
                if found is None:
                    unknown += 1
                else:
                    entries.append(found)
        except OSError as exc:
            yield quarantine(source, None, NAME, InputError(f"{source.name}: {exc}", kind="io"))
            return
        try:
            yield from self._records(source, entries, unknown)
        except (RecordError, KeyError, TypeError, AttributeError, ValueError) as exc:
            error = RecordError(f"{source.name}: {type(exc).__name__}: {exc}")
            yield quarantine(source, None, NAME, error)

    def _records(
        self, source: Source, entries: list[tuple[str, dict[str, Any]]], unknown: int
    ) -> Iterator[TrajectoryRecord]:
        meta = next((p for k, p in entries if k == "session_meta"), {})
        segmenter = Segmenter(system_prompt=_instructions(meta))
        facts = _Facts()
        for kind, payload in entries:
            if kind == "response_item":
                segmenter.add(payload)
            elif kind == "compacted":
                segmenter.compact(payload)
            else:
                facts.add(kind, payload)
        windows = segmenter.finish()
        if not windows:
            raise RecordError("no model turn in the rollout (no assistant message or tool call)")
        if unknown:
            bump(segmenter.counts, "unknown_lines", unknown)
        session = str(meta.get("id")) if meta.get("id") is not None else None
        facts.groups = tool_groups(windows)
        for number, messages in enumerate(windows):
            native_id = session if number == 0 or session is None else f"{session}:{number}"
            yield self._record(
                source, number, native_id, messages, meta, facts, segmenter, len(windows)
            )

    def _record(
        self,
        source: Source,
        number: int,
        native_id: str | None,
        messages: list[Message],
        meta: dict[str, Any],
        facts: _Facts,
        segmenter: Segmenter,
        windows: int,
    ) -> TrajectoryRecord:
        usage = facts.usage
        whole = windows == 1 and usage is not None
        source_kind = meta.get("source")
        metadata = {
            "session_id": _string(meta.get("id")),
            "cwd": meta.get("cwd"),
            "originator": meta.get("originator"),
            "source": source_kind,
            "model_provider": meta.get("model_provider"),
            "git": meta.get("git"),
            "models": facts.models,
            "approval_policy": facts.approval,
            "sandbox_policy": facts.sandbox,
            "window": number,
            "windows": windows,
            "base_instructions": "recorded" if segmenter.system_prompt else "not recorded",
            "counts": {**segmenter.counts, **{f"event:{k}": v for k, v in facts.events.items()}},
            "token_usage": usage,
            "tool_groups": facts.groups,
        }
        task = facts.task or next(
            (m.content for m in messages if m.role == "user" and not is_injected(m.content)), None
        )
        sidechain = isinstance(source_kind, dict) and "subagent" in source_kind
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, native_id, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=number,
            native_id=native_id,
            harness=self.harness,
            harness_version=_string(meta.get("cli_version")),
            agent_model=facts.models[0] if facts.models else _string(meta.get("model")),
            task=task,
            system_prompt=segmenter.system_prompt,
            tools=None,
            messages=messages,
            prompt_tokens=as_count(usage.get("input_tokens")) if whole and usage else None,
            completion_tokens=as_count(usage.get("output_tokens")) if whole and usage else None,
            fidelity=FIDELITY_RECONSTRUCTED,
            is_sidechain=sidechain or meta.get("thread_source") == "subagent",
            metadata=canonical_json(metadata),
        )

    def parse_action(self, message: Message) -> list[Action]:
        actions = []
        for call in message.tool_calls:
            action = tool_call_action(call.name, call.arguments)
            arguments = json.loads(action.arguments)
            command = shell_command(call.name, arguments)
            actions.append(Action(action.tool, action.arguments, command, action.raw))
        return actions

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        """(header, output, trailer); for the older JSON object the output is decoded and the
        prefix/suffix are the object's text around it (`with_payload` writes it back)."""
        text = message.content
        value = envelope(text)
        if value is not None:
            rest = _compact({k: v for k, v in value.items() if k != "output"})
            return '{"output":"', value["output"], '",' + rest[1:] if rest != "{}" else '"}'
        match = _HEADER.match(text)
        if match is None:
            return "", text, ""
        return match.group(1), text[match.end() :], ""

    def with_payload(self, message: Message, payload: str) -> str:
        value = envelope(message.content)
        if value is None:
            return super().with_payload(message, payload)
        return _compact({**value, "output": payload})


class _Facts:
    """What `session_meta` / `turn_context` / `event_msg` lines say about the session."""

    def __init__(self) -> None:
        self.models: list[str] = []
        self.approval: Any = None
        self.sandbox: Any = None
        self.task: str | None = None
        self.usage: dict[str, Any] | None = None
        self.events: dict[str, int] = {}
        self.groups: list[str] = []

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model not in self.models:
                self.models.append(model)
            if self.approval is None:
                self.approval, self.sandbox = (
                    payload.get("approval_policy"),
                    payload.get("sandbox_policy"),
                )
        elif kind == "event_msg":
            event = str(payload.get("type"))
            bump(self.events, event)
            if event == "user_message" and self.task is None:
                text = text_of(payload.get("message"), {})
                self.task = text if text and not is_injected(text) else None
            info = payload.get("info")
            if event == "token_count" and isinstance(info, dict):
                total = info.get("total_token_usage")
                self.usage = total if isinstance(total, dict) else self.usage


def _instructions(meta: dict[str, Any]) -> str | None:
    """The system prompt the session recorded: `base_instructions.text`, or the older
    `instructions` (null there means the model's built-in prompt, which is not in the file)."""
    base = meta.get("base_instructions")
    if isinstance(base, dict) and isinstance(base.get("text"), str) and base["text"]:
        return str(base["text"])
    if isinstance(base, str) and base:
        return base
    instructions = meta.get("instructions")
    return instructions if isinstance(instructions, str) and instructions else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


ADAPTER = CodexCliAdapter()
