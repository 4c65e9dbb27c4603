"""`swe-agent`: SWE-agent `.traj` files, 0.x and 1.x.

The canonical messages are `history` (the chat the model saw), few-shot demonstrations
included but flagged `is_demo` so that they are replayed and never made into steps.
- 0.x: `{role, content, agent, is_demo?}`; the action is the last fenced block of the
  assistant text (`grammars.swe_agent_command`: SWE-agent's own commands get tool
  `swe-agent-command`, other commands `bash`).
- 1.x: assistant turns carry OpenAI `tool_calls` (arguments as JSON text); tool turns have
  `role: tool`, `tool_call_ids` (the first becomes `tool_call_id`) and string or
  `[{type: text, text}]` content (the list is kept in `content_parts`).
- 1.x with `parse_function: {type: xml_function_calling}` (SWE-agent-LM and other SWE-smith
  models, the runs SWE-bench publishes for them): no tool calls; the thought is followed by one
  `<function=bash><parameter=command>...</parameter></function>` call in the text, and
  observations are user messages `OBSERVATION:\n...` (the default `next_step_template`).
Task: `replay_config.problem_statement.text` (1.x), else the issue in the first non-demo user
message (the text between `ISSUE:` and `INSTRUCTIONS:` of SWE-agent's template, else the whole
message). Observations: an `OBSERVATION:` line that opens one is the prefix, the
`(Open file: ...)\n(Current directory: ...)` trailer that SWE-agent appends the suffix, the
rest the payload. Per-step `state` and `execution_time`
go to metadata, and so do the run's tool bundles (`tool_groups`), which give a function-calling
replay its tool schemas (`builder.steps.tool_sets`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from builder.errors import RecordError
from builder.ingest.formats import grammars
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    as_count,
    as_float,
    canonical_json,
    hand_over,
    quarantine,
    tool_call_action,
    trajectory_id,
)
from builder.ingest.formats.chat_messages import (
    parse_message,
    split_marked_observation,
    system_prompt,
)
from builder.ingest.formats.mini_swe_agent import native_id_from_path
from builder.ingest.formats.source import Source
from schemas.steps import Action
from schemas.trajectories import Message, TrajectoryRecord

_STATE_TRAILER = re.compile(
    r"\n?\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\n?(?:bash-\$)?\s*\Z"
)
_ISSUE = re.compile(r"ISSUE:\n(.*?)\n+INSTRUCTIONS:", re.DOTALL)


def _as_dict(value: Any) -> dict[str, Any]:
    """A dict, or a JSON object string parsed (replay_config and state are JSON text)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def _task(replay: dict[str, Any], messages: list[Message]) -> str | None:
    text = _as_dict(replay.get("problem_statement")).get("text")
    if isinstance(text, str) and text:
        return text
    first_user = next((m for m in messages if m.role == "user" and not m.is_demo), None)
    if first_user is None:
        return None
    match = _ISSUE.search(first_user.content)
    return match.group(1) if match else first_user.content


def _step_metadata(trajectory: Any) -> dict[str, Any]:
    if not isinstance(trajectory, list):
        return {}
    steps = [s for s in trajectory if isinstance(s, dict)]
    return {
        "states": [_as_dict(s.get("state")) or None for s in steps],
        "execution_times": [s.get("execution_time") for s in steps],
    }


class SweAgentAdapter(BaseAdapter):
    name = "swe-agent"
    harness = "swe-agent"
    persistent_shell = True  # one bash session for the whole run: a `cd` stays
    text_replies = True

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """The harness runs exactly one action a turn; anything else is a format error."""
        return len(actions) != 1

    def detect(self, source: Source) -> bool:
        doc = source.json_document()
        return (
            isinstance(doc, dict)
            and isinstance(doc.get("history"), list)
            and isinstance(doc.get("trajectory"), list)
            and isinstance(doc.get("info"), dict)
        )

    def load(self, source: Source) -> Iterator[LoadResult]:
        box: list[LoadResult] = []  # the record, held by nothing else once handed over
        try:
            box.append(self._record(source, source.document()))
        except RecordError as exc:
            box.append(quarantine(source, 0, self.name, exc))
        source.release()  # the record alone holds the text now (see FormatAdapter.load)
        yield from hand_over(box)

    def _record(self, source: Source, doc: Any) -> TrajectoryRecord:
        where = f"{source.name} record 0"
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
            raise RecordError(f"{where}: expected an object with a `history` list")
        messages = [parse_message(m, f"{where} history {i}") for i, m in enumerate(doc["history"])]
        if not messages:
            raise RecordError(f"{where}: history is empty")
        info = _as_dict(doc.get("info"))
        stats = _as_dict(info.get("model_stats"))
        replay = _as_dict(doc.get("replay_config"))
        model = _as_dict(_as_dict(replay.get("agent")).get("model")).get("name")
        version = info.get("swe_agent_version")
        metadata = {
            "environment": doc.get("environment"),
            "submission": info.get("submission"),
            "swe_agent_hash": info.get("swe_agent_hash"),
            "tool_groups": _tool_groups(replay),
            **_step_metadata(doc.get("trajectory")),
        }
        native_id = _as_dict(replay.get("problem_statement")).get("id")
        native_id = str(native_id) if native_id else native_id_from_path(source.path)
        return TrajectoryRecord(
            trajectory_id=trajectory_id(self.name, native_id, messages),
            source_format=self.name,
            source_path=source.name,
            record_index=0,
            native_id=native_id,
            harness=self.harness,
            harness_version=str(version) if version is not None else None,
            agent_model=model if isinstance(model, str) else None,
            task=_task(replay, messages),
            system_prompt=system_prompt(messages),
            tools=None,
            messages=messages,
            exit_status=_str(info.get("exit_status")),
            cost_usd=_num(stats.get("instance_cost"), float),
            prompt_tokens=_num(stats.get("tokens_sent"), int),
            completion_tokens=_num(stats.get("tokens_received"), int),
            api_calls=_num(stats.get("api_calls"), int),
            metadata=canonical_json({k: v for k, v in metadata.items() if v is not None}),
        )

    def parse_action(self, message: Message) -> list[Action]:
        if message.tool_calls:
            return [tool_call_action(c.name, c.arguments) for c in message.tool_calls]
        # XML calls first: their thought may hold fenced blocks that are not the action
        return grammars.xml_function_calls(message.content) or grammars.swe_agent_command(
            message.content
        )

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        """`OBSERVATION:` and the `(Open file: ...)(Current directory: ...)bash-$` trailer are
        envelope, not output."""
        prefix, rest, _ = split_marked_observation(message.content)
        match = _STATE_TRAILER.search(rest)
        if match is None:
            return prefix, rest, ""
        return prefix, rest[: match.start()], rest[match.start() :]


def _tool_groups(replay: dict[str, Any]) -> list[str] | None:
    """The tool bundles the run had (`tools/search` -> `search`), with `bash` first unless
    `enable_bash_tool` was off: the groups of `builder/steps/harness_tools/swe-agent.json`."""
    tools = _as_dict(_as_dict(replay.get("agent")).get("tools"))
    bundles = tools.get("bundles")
    if not isinstance(bundles, list):
        return None
    names = [
        str(b["path"]).rstrip("/").rsplit("/", 1)[-1]
        for b in bundles
        if isinstance(b, dict) and isinstance(b.get("path"), str)
    ]
    return (["bash"] if tools.get("enable_bash_tool", True) is not False else []) + names


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


def _num(value: Any, kind: type) -> Any:
    return as_float(value) if kind is float else as_count(value)


ADAPTER = SweAgentAdapter()
