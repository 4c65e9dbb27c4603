"""OpenHands v0 event logs: evaluation `output.jsonl`, bare event lists, the old flat resolver form.

Each action event becomes an assistant message with one tool call (the real call from
`tool_call_metadata.model_response` when logged; parallel calls of one response share one
assistant message), and each observation a `tool` message paired by `cause` / tool-call id.
User messages stay user messages, the `system` action is the system prompt; bookkeeping events
(recall requests, state changes, null observations, condensation) are counted in metadata.
The old flat form has no ids: there an observation answers the oldest unanswered action.
A JSON document may also be `{"trajectory": [events]}` (the conversation export).
Edit observations use `extras.formatted_output_and_error` when present: that is the editor's
own output, while `content` may be a diff rendered for the UI. Shell output gets back the
status lines the model saw (`render_command_output`), which `split_observation` splits off.
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
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.openhands_v0_events import (
    EventBuilder,
    events_of,
    is_output_line,
    looks_like_event,
)
from builder.ingest.formats.reconstruct import as_int, obj, split_openhands_trailer
from builder.ingest.formats.source import Source
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, TrajectoryRecord

NAME = "openhands-v0"


class OpenHandsV0Adapter(BaseAdapter):
    name = NAME
    harness = "openhands"
    persistent_shell = True  # one bash session (tmux) for the whole run: a `cd` stays

    def detect(self, source: Source) -> bool:
        value = source.first_value()
        if is_output_line(value):
            return True
        if isinstance(value, dict) and set(value) == {"trajectory"}:
            value = value["trajectory"]
        return (
            not source.is_jsonl
            and isinstance(value, list)
            and bool(value)
            and all(isinstance(e, dict) for e in value)
            and looks_like_event(value[0])
            and all("action" in e or "observation" in e for e in value)
        )

    def load(self, source: Source) -> Iterator[LoadResult]:
        if source.is_jsonl:
            for index, value in source.lines():
                yield self._safe(source, index, value)
            return
        try:
            document = source.document()
        except InputError as exc:
            yield quarantine(source, None, NAME, exc)
            return
        if isinstance(document, dict) and set(document) == {"trajectory"}:
            document = document["trajectory"]
        if isinstance(document, list):
            yield self._safe(source, 0, {"history": document})
        else:
            yield self._safe(source, 0, document)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_openhands_trailer(message.content)

    def _safe(self, source: Source, index: int, value: Any) -> LoadResult:
        if isinstance(value, InputError):
            return quarantine(source, index, NAME, value)
        try:
            return self._record(source, index, value)
        except (RecordError, KeyError, TypeError, AttributeError, ValueError) as exc:
            error = (
                exc if isinstance(exc, RecordError) else RecordError(f"{type(exc).__name__}: {exc}")
            )
            return quarantine(
                source, index, NAME, RecordError(f"{source.name} record {index}: {error}")
            )

    def _record(self, source: Source, index: int, value: Any) -> TrajectoryRecord:
        if not isinstance(value, dict) or "history" not in value:
            raise RecordError("not an OpenHands output object (no `history`)")
        builder = EventBuilder()
        for position, event in enumerate(events_of(value["history"])):
            builder.feed(position, event)
        messages, _ = builder.transcript.finish()
        if not messages:
            raise RecordError("history holds no messages")
        instance = obj(value.get("instance"))
        meta = obj(value.get("metadata"))
        llm = obj(meta.get("llm_config"))
        metrics = obj(value.get("metrics"))
        usage = metrics.get("accumulated_token_usage") or {}
        task = instance.get("problem_statement") or value.get("instruction") or builder.task
        native_id = value.get("instance_id")
        if native_id is None and isinstance(value.get("issue"), dict):
            issue = value["issue"]
            native_id = f"{issue.get('owner')}/{issue.get('repo')}#{issue.get('number')}"
        error = value.get("error")
        exit_status = f"error: {error}" if error else ("finished" if builder.finished else None)
        extra = {k: value[k] for k in ("success", "result_explanation", "git_patch") if k in value}
        if isinstance(value.get("test_result"), dict):
            extra["test_result"] = value["test_result"]
        extra.update(
            {
                "agent_class": meta.get("agent_class"),
                "event_counts": builder.counts,
                "instance": {k: v for k, v in instance.items() if k != "problem_statement"},
            }
        )
        costs = metrics.get("costs")
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, str(native_id) if native_id else None, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=index,
            native_id=str(native_id) if native_id is not None else None,
            harness=self.harness,
            harness_version=builder.version or meta.get("openhands_version") or meta.get("version"),
            agent_model=llm.get("model") or meta.get("model_name"),
            task=task if isinstance(task, str) else None,
            system_prompt=builder.system_prompt,
            tools=builder.tools,
            messages=messages,
            exit_status=exit_status,
            resolved=_resolved(value.get("test_result")),
            cost_usd=_number(metrics.get("accumulated_cost")),
            prompt_tokens=as_int(obj(usage).get("prompt_tokens")),
            completion_tokens=as_int(obj(usage).get("completion_tokens")),
            api_calls=len(costs) if isinstance(costs, list) else None,
            fidelity=FIDELITY_RECONSTRUCTED,
            metadata=json.dumps(extra, sort_keys=True, ensure_ascii=False, default=str),
        )


def _resolved(test_result: Any) -> bool | None:
    if not isinstance(test_result, dict):
        return None
    report = test_result.get("report")
    value = report.get("resolved") if isinstance(report, dict) else test_result.get("resolved")
    return value if isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return as_float(value)


ADAPTER = OpenHandsV0Adapter()
