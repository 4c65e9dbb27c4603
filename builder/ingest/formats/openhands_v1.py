"""OpenHands SDK (v1) event logs: one JSON event per line, one file per conversation.

`ActionEvent`s of one LLM response (same `llm_response_id`) become one assistant message whose
content is the logged `thought`; `ObservationEvent`, `AgentErrorEvent` and
`UserRejectObservation` become `tool` messages paired by `tool_call_id` (or `action_id`).
An observation whose action is missing from the log gets a synthesized assistant call built
from the observation's own `tool_name` and `command` (counted in `metadata.synthesized_calls`),
so the chat stays well formed. Terminal output gets back the status lines the model saw
(working directory, interpreter, exit code; `split_observation` splits them off; the error
header the SDK prepends to failed commands is not rebuilt). State updates feed metadata: the
last `stats` gives model, tokens and cost, the last `execution_status` the exit status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    as_float,
    canonical_json,
    content_text,
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.reconstruct import (
    Transcript,
    arguments_text,
    as_int,
    obj,
    render_command_output,
    split_openhands_trailer,
    text_message,
)
from builder.ingest.formats.source import Source
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, ToolCall, TrajectoryRecord

NAME = "openhands-v1"

EVENT_KINDS = {
    "ActionEvent", "ObservationEvent", "MessageEvent", "SystemPromptEvent",
    "ConversationStateUpdateEvent", "AgentErrorEvent", "UserRejectObservation", "PauseEvent",
    "Condensation", "CondensationRequest", "CondensationSummaryEvent", "ConversationErrorEvent",
    "TokenEvent", "LLMCompletionLogEvent", "InterruptEvent", "HookExecutionEvent",
}  # fmt: skip


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("kind"), str)
        and value["kind"] in EVENT_KINDS
        and "id" in value
        and "source" in value
    )


class _Builder:
    """Walks the events of one conversation."""

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.call_of_action: dict[str, str] = {}  # ActionEvent id -> tool call id
        self.pending: list[dict[str, Any]] = []  # ActionEvents of the current LLM response
        self.system_prompt: str | None = None
        self.tools: str | None = None
        self.task: str | None = None
        self.stats: dict[str, Any] = {}
        self.status: str | None = None
        self.model: str | None = None
        self.counts: dict[str, int] = {}

    def feed(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        if kind != "ActionEvent" or not self._same_response(event):
            self._flush()
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return
        handler(event)

    def finish(self) -> list[Message]:
        self._flush()
        return self.transcript.finish()[0]

    def _same_response(self, event: dict[str, Any]) -> bool:
        if not self.pending:
            return True
        rid = event.get("llm_response_id")
        return rid is not None and rid == self.pending[0].get("llm_response_id")

    def _flush(self) -> None:
        if not self.pending:
            return
        texts = [content_text(e.get("thought"))[0] for e in self.pending]
        calls = [self._call(e) for e in self.pending]
        self.transcript.add_assistant("\n".join(t for t in texts if t), calls)
        self.pending = []

    def _call(self, event: dict[str, Any]) -> ToolCall:
        raw = obj(event.get("tool_call"))
        action = obj(event.get("action"))
        call_id = str(event.get("tool_call_id") or raw.get("id") or f"call_{event['id']}")
        name = event.get("tool_name") or raw.get("name") or action.get("kind") or "unknown"
        if "arguments" in raw:
            arguments = arguments_text(raw["arguments"])
        else:
            arguments = canonical_json({k: v for k, v in action.items() if k != "kind"})
        self.call_of_action[str(event["id"])] = call_id
        return ToolCall(id=call_id, name=str(name), arguments=arguments)

    def _on_ActionEvent(self, event: dict[str, Any]) -> None:
        self.pending.append(event)

    def _on_SystemPromptEvent(self, event: dict[str, Any]) -> None:
        prompt = event.get("system_prompt")
        message = text_message("system", [prompt] if isinstance(prompt, dict) else prompt)
        self.system_prompt = message.content
        if event.get("tools"):
            self.tools = canonical_json(event["tools"])
        self.transcript.add(message)

    def _on_MessageEvent(self, event: dict[str, Any]) -> None:
        llm = obj(event.get("llm_message"))
        role = llm.get("role") or ("user" if event.get("source") == "user" else "assistant")
        content = llm.get("content")
        extended = event.get("extended_content")
        if isinstance(extended, list) and extended:
            content = (content if isinstance(content, list) else [content]) + extended
        message = text_message(str(role), content)
        if role == "user" and self.task is None:
            self.task = message.content
        self.transcript.add(message)

    def _on_ObservationEvent(self, event: dict[str, Any]) -> None:
        observation = obj(event.get("observation"))
        text, parts = content_text(observation.get("content"))
        metadata = observation.get("metadata")
        if isinstance(metadata, dict):  # terminal output: rebuild what the model was shown
            text, parts = render_command_output(text, metadata), None
        self._result(event, text, parts, observation.get("command"))

    def _on_AgentErrorEvent(self, event: dict[str, Any]) -> None:
        self._result(event, str(event.get("error", "")), None, None)

    def _on_UserRejectObservation(self, event: dict[str, Any]) -> None:
        reason = event.get("rejection_reason") or "Action rejected by the user."
        self._result(event, str(reason), None, None)

    def _on_CondensationSummaryEvent(self, event: dict[str, Any]) -> None:
        self.transcript.add(Message(role="user", content=str(event.get("summary", ""))))

    def _on_ConversationStateUpdateEvent(self, event: dict[str, Any]) -> None:
        key, value = event.get("key"), event.get("value")
        if key == "execution_status" and isinstance(value, str):
            self.status = value
        elif key == "stats" and isinstance(value, dict):
            metrics = (value.get("usage_to_metrics") or {}).get("default")
            if isinstance(metrics, dict):
                self.stats = metrics
                self.model = metrics.get("model_name") or self.model
        elif key == "full_state" and isinstance(value, dict):
            llm = (value.get("agent") or {}).get("llm") or {}
            self.model = llm.get("model") or self.model
            if isinstance(value.get("execution_status"), str):
                self.status = value["execution_status"]

    def _result(self, event: dict[str, Any], text: str, parts: str | None, command: Any) -> None:
        call_id = event.get("tool_call_id") or self.call_of_action.get(str(event.get("action_id")))
        name = event.get("tool_name")
        if call_id is None:
            self.transcript.add(Message(role="user", content=text, content_parts=parts))
            self.counts["unpaired_observations"] = self.counts.get("unpaired_observations", 0) + 1
            return
        message = Message(
            role="tool", content=text, tool_call_id=str(call_id), name=name, content_parts=parts
        )
        if not self.transcript.knows(str(call_id)):
            arguments = {"command": command} if isinstance(command, str) else {}
            call = ToolCall(
                id=str(call_id), name=str(name or "unknown"), arguments=canonical_json(arguments)
            )
            self.transcript.add_assistant("", [call])
            self.counts["synthesized_calls"] = self.counts.get("synthesized_calls", 0) + 1
        self.transcript.add_result(message)


class OpenHandsV1Adapter(BaseAdapter):
    name = NAME
    harness = "openhands-sdk"
    persistent_shell = True  # one terminal session for the whole conversation: a `cd` stays

    def detect(self, source: Source) -> bool:
        value = source.first_value()
        if isinstance(value, list) and not source.is_jsonl:
            return bool(value) and all(_is_event(e) for e in value[:20])
        return source.is_jsonl and _is_event(value)

    def load(self, source: Source) -> Iterator[LoadResult]:
        builder = _Builder()
        try:
            document = None if source.is_jsonl else source.document()
        except InputError as exc:
            yield quarantine(source, None, NAME, exc)
            return
        if document is not None and not isinstance(document, list):
            error = RecordError(f"{source.name}: expected a JSON list of SDK events")
            yield quarantine(source, None, NAME, error)
            return
        items = source.lines() if document is None else enumerate(document)
        for index, value in items:
            if isinstance(value, InputError):
                yield quarantine(source, index, NAME, value)
            elif not _is_event(value):
                message = f"{source.name} record {index}: not an SDK event (no known `kind`)"
                yield quarantine(source, index, NAME, RecordError(message))
            else:
                try:
                    builder.feed(value)
                except (KeyError, TypeError, AttributeError, ValueError) as exc:
                    cause = f"{type(exc).__name__}: {exc}"
                    error = RecordError(
                        f"{source.name} record {index}: bad {value['kind']}: {cause}"
                    )
                    yield quarantine(source, index, NAME, error)
        messages = builder.finish()
        if not messages:
            error = RecordError(f"{source.name}: no conversation events")
            yield quarantine(source, None, NAME, error)
            return
        yield self._record(source, builder, messages)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_openhands_trailer(message.content)

    def _record(
        self, source: Source, builder: _Builder, messages: list[Message]
    ) -> TrajectoryRecord:
        usage = builder.stats.get("accumulated_token_usage") or {}
        cost = builder.stats.get("accumulated_cost")
        metadata = {"event_counts": builder.counts}
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, None, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=0,
            native_id=None,
            harness=self.harness,
            harness_version=None,
            agent_model=builder.model,
            task=builder.task,
            system_prompt=builder.system_prompt,
            tools=builder.tools,
            messages=messages,
            exit_status=builder.status,
            cost_usd=as_float(cost),
            prompt_tokens=as_int(obj(usage).get("prompt_tokens")),
            completion_tokens=as_int(obj(usage).get("completion_tokens")),
            fidelity=FIDELITY_RECONSTRUCTED,
            metadata=json.dumps(metadata, sort_keys=True),
        )


ADAPTER = OpenHandsV1Adapter()
