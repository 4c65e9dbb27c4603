"""Harbor's Agent Trajectory Interchange Format (ATIF v1.x), and a common variant of it.

Standard ATIF: an agent step carries its `tool_calls[{tool_call_id, function_name, arguments}]`
and the `observation.results[{source_call_id, content}]` answering them. The variant (seen in
converted Claude Code runs, `schema_version: "1.4"`, `agent.model`) writes calls as
`{id, name, arguments}` and each result as a separate `source: system` step with
`observation{type: tool_result, content}` naming its call only in `message` ("Tool result for
ID"), sometimes before the step that made the call. Both shapes become one chat: results are
placed right after the assistant turn that made their call. A result naming no call answers
the step's calls in order (or, when the counts differ, goes to its last call as one message);
without any call it is a user message, the observation of a non-tool action. System steps
without an observation are system messages (the system prompt).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    SHELL_TOOLS,
    BaseAdapter,
    LoadResult,
    as_float,
    canonical_json,
    content_text,
    quarantine,
    tool_call_action,
    trajectory_id,
)
from builder.ingest.formats.reconstruct import (
    Transcript,
    arguments_text,
    as_int,
    obj,
    text_message,
)
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import FIDELITY_RECONSTRUCTED, Message, ToolCall, TrajectoryRecord

NAME = "atif"
_RESULT_FOR = re.compile(r"^Tool result for (\S+)")
_ID_KEYS = ("source_call_id", "tool_call_id", "tool_use_id", "call_id")


def _is_atif(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list):
        return False
    version = value.get("schema_version")
    return (
        isinstance(version, str)
        and (version.upper().startswith("ATIF") or version[:1].isdigit())
        and isinstance(value.get("agent"), dict)
    )


def _call(raw: Any, step_id: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise RecordError(f"step {step_id}: tool call {index} is not an object")
    function = obj(raw.get("function"))
    call_id = raw.get("tool_call_id") or raw.get("id") or f"call_{step_id}_{index}"
    name = raw.get("function_name") or raw.get("name") or function.get("name") or ""
    arguments = raw.get("arguments", function.get("arguments"))
    return ToolCall(id=str(call_id), name=str(name), arguments=arguments_text(arguments))


def _result_id(result: dict[str, Any], step: dict[str, Any]) -> str | None:
    for holder in (result, step.get("observation") or {}, step):
        for key in _ID_KEYS:
            if isinstance(holder, dict) and holder.get(key):
                return str(holder[key])
    match = _RESULT_FOR.match(step.get("message") or "")
    return match.group(1) if match else None


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The observation's results in the standard shape, whichever shape was logged."""
    observation = step.get("observation")
    if not isinstance(observation, dict):
        return []
    if isinstance(observation.get("results"), list):
        return [r for r in observation["results"] if isinstance(r, dict)]
    if "content" in observation or "result" in observation:
        content = observation.get("content")
        if content is None and isinstance(observation.get("result"), dict):
            inner = observation["result"]
            content = inner.get("output", inner.get("error"))
        return [{"content": content}]
    return []


def _result_content(result: dict[str, Any]) -> tuple[str, str | None]:
    content = result.get("content")
    if content is None and result.get("subagent_trajectory_ref"):
        content = json.dumps(result["subagent_trajectory_ref"], sort_keys=True)
    if isinstance(content, dict):
        return json.dumps(content, sort_keys=True, ensure_ascii=False), None
    return content_text(content)


class _Builder:
    def __init__(self) -> None:
        self.transcript = Transcript()
        self.system_prompt: str | None = None
        self.task: str | None = None
        self.counts: dict[str, int] = {}

    def step(self, step: dict[str, Any]) -> None:
        source = step.get("source")
        message = step.get("message")
        if source == "agent":
            self._agent(step)
        elif source == "user":
            added = text_message("user", message)
            self.transcript.add(added)
            self.task = self.task if self.task is not None else added.content
            self._observe(step, [])
        elif source == "system":
            if step.get("observation") is None:
                added = text_message("system", message)
                self.system_prompt = self.system_prompt or added.content
                self.transcript.add(added)
            else:
                self._observe(step, [])
        else:
            raise RecordError(f"step {step.get('step_id')}: unknown source {source!r}")

    def _agent(self, step: dict[str, Any]) -> None:
        raw_calls = step.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise RecordError(f"step {step.get('step_id')}: `tool_calls` is not a list")
        calls = [_call(c, step.get("step_id"), i) for i, c in enumerate(raw_calls)]
        text, parts = content_text(step.get("message"))
        self.transcript.add_assistant(text, calls, parts)
        self._observe(step, calls)

    def _observe(self, step: dict[str, Any], calls: list[ToolCall]) -> None:
        results = [(r, _result_id(r, step)) for r in _results(step)]
        named = {call_id for _, call_id in results if call_id is not None}
        open_calls = [c for c in calls if c.id not in named]
        unnamed = [r for r, call_id in results if call_id is None]
        seen_unnamed = 0
        for result, call_id in results:
            text, parts = _result_content(result)
            if call_id is None and open_calls:
                seen_unnamed += 1
                if len(unnamed) == len(open_calls):
                    call_id = open_calls[seen_unnamed - 1].id
                elif seen_unnamed < len(unnamed):
                    continue  # one screen for several calls: all of it answers the last call
                else:
                    call_id = open_calls[-1].id
                    text, parts = "\n".join(_result_content(r)[0] for r in unnamed), None
            if call_id is None:
                self.transcript.add(Message(role="user", content=text, content_parts=parts))
                continue
            message = Message(
                role="tool",
                content=text,
                tool_call_id=call_id,
                name=self.transcript.names.get(call_id),
                content_parts=parts,
            )
            self.transcript.add_result(message, defer=True)


class AtifAdapter(BaseAdapter):
    name = NAME
    harness = "atif"

    def parse_action(self, message: Message) -> list[Action]:
        """Tool calls; Terminus' `bash_command{keystrokes}` counts as the shell command typed."""
        actions = []
        for call in message.tool_calls:
            action = tool_call_action(call.name, call.arguments)
            keys = json.loads(action.arguments).get("keystrokes")
            if action.command is None and call.name in SHELL_TOOLS and isinstance(keys, str):
                action = replace(action, command=keys.strip())
            actions.append(action)
        return actions

    def detect(self, source: Source) -> bool:
        return _is_atif(source.json_document())

    def load(self, source: Source) -> Iterator[LoadResult]:
        try:
            document = source.document()
            if not _is_atif(document):
                raise RecordError(f"{source.name}: not ATIF (`schema_version`, `agent`, `steps`)")
            yield self._record(source, document)
        except InputError as exc:
            yield quarantine(source, None, NAME, exc)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            error = RecordError(f"{source.name}: {type(exc).__name__}: {exc}")
            yield quarantine(source, None, NAME, error)

    def _record(self, source: Source, document: dict[str, Any]) -> TrajectoryRecord:
        builder = _Builder()
        for index, step in enumerate(document["steps"]):
            if not isinstance(step, dict):
                raise RecordError(f"{source.name} step {index}: not an object")
            try:
                builder.step(step)
            except RecordError as exc:
                raise RecordError(f"{source.name} step {index}: {exc}") from exc
        messages, orphans = builder.transcript.finish()
        if not messages:
            raise RecordError(f"{source.name}: no steps")
        agent = document["agent"]
        final = obj(document.get("final_metrics"))
        extra = obj(document.get("extra"))
        metadata = {
            "schema_version": document.get("schema_version"),
            "agent": agent,
            "notes": document.get("notes"),
            "final_metrics": final,
            "extra": extra,
            "orphan_results": orphans,
        }
        session = document.get("session_id")
        cost = final.get("total_cost_usd")
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, str(session) if session else None, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=0,
            native_id=str(session) if session else None,
            harness=str(agent.get("name") or NAME),
            harness_version=agent.get("version"),
            agent_model=agent.get("model_name") or agent.get("model"),
            task=builder.task or extra.get("instruction"),
            system_prompt=builder.system_prompt,
            tools=_tools(agent),
            messages=messages,
            cost_usd=as_float(cost),
            prompt_tokens=as_int(final.get("total_prompt_tokens")),
            completion_tokens=as_int(final.get("total_completion_tokens")),
            api_calls=sum(1 for m in messages if m.role == "assistant") or None,
            fidelity=FIDELITY_RECONSTRUCTED,
            metadata=json.dumps(metadata, sort_keys=True, ensure_ascii=False, default=str),
        )


def _tools(agent: dict[str, Any]) -> str | None:
    """Tool schemas when the agent block lists them (`tool_definitions`, newer ATIF)."""
    tools = agent.get("tool_definitions") or agent.get("tools")
    return canonical_json(tools) if isinstance(tools, list) and tools else None


ADAPTER = AtifAdapter()
