"""`mini-swe-agent`: `.traj.json` files of mini-swe-agent v1 and v2, and bare message lists.

- v1 (`trajectory_format: mini-swe-agent-1`): `{info, messages, instance_id}`; every message is a
  plain `{role, content}`; the action is one fenced ```bash block per assistant turn.
- v2 (`mini-swe-agent-1.1`): messages are the model's native messages plus `extra`
  (`extra.actions[{command}]`); tool-call models add `tool_calls` and answer with `tool`
  messages; the last message has role `exit` and carries `extra.exit_status/submission`. That
  message is not chat: it becomes `exit_status` and metadata.
- A bare JSON list of `{role, content}` (older runs, e.g. `github_issue.traj.json`).

Resolution comes from a SWE-bench `report.json` beside the file when there is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from builder.errors import RecordError
from builder.ingest.file_reading import STREAM_SUFFIXES
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
from builder.ingest.formats.chat_messages import parse_message, system_prompt, task_from_messages
from builder.ingest.formats.source import Source
from builder.ingest.names import safe_text
from schemas.steps import Action
from schemas.trajectories import Message, TrajectoryRecord

FORMAT_PREFIX = "mini-swe-agent"
EXIT_ROLE = "exit"
TRAJ_SUFFIXES = (".traj.json", ".traj", ".json")


def native_id_from_path(path: Path) -> str:
    """The run id a file name carries: `x.traj.json`, `x.traj.json.gz` -> `x` (as safe text:
    a file name may hold any bytes)."""
    name = safe_text(path.name)
    for suffix in STREAM_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    for suffix in TRAJ_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def resolved_from_report(path: Path, instance_id: str) -> bool | None:
    """`resolved` from a sibling SWE-bench report.json: per-instance or run-level shapes."""
    report_path = path.parent / "report.json"
    if not report_path.is_file():
        return None
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(report, dict):
        return None
    entry = report.get(instance_id)
    if isinstance(entry, dict) and isinstance(entry.get("resolved"), bool):
        return entry["resolved"]
    if isinstance(report.get("resolved"), bool):  # the instance's own logs/<id>/report.json
        return report["resolved"]
    if isinstance(report.get("resolved_ids"), list):  # a run report
        if instance_id in report["resolved_ids"]:
            return True
        if instance_id in (report.get("completed_ids") or report.get("unresolved_ids") or []):
            return False
    return None


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _usage_totals(raw_messages: list[Any]) -> tuple[int | None, int | None]:
    """Prompt/completion tokens summed over `extra.response.usage` when the provider gave them."""
    prompt = completion = 0
    seen = False
    for m in raw_messages:
        usage = _dig(m, "extra", "response", "usage")
        if isinstance(usage, dict):
            seen = True
            prompt += _int(usage.get("prompt_tokens"))
            completion += _int(usage.get("completion_tokens"))
    return (as_count(prompt), as_count(completion)) if seen else (None, None)


_ENVELOPE_OPEN = re.compile(
    r"\A(?P<pre>(?:<returncode>-?\d+</returncode>|[^<]*<command>.*?</command>[^<]*)?\s*"
    r"(?:<warning>.*?</warning>\s*)?)<(?P<tag>output|output_head)>\n?",
    re.DOTALL,
)
_EXIT_CODE_TRAILER = re.compile(r"\[exit code -?\d+\]\s*\Z")


def split_envelope(content: str) -> tuple[str, str, str]:
    """(`<returncode>N</returncode>\\n<output>\\n`, output, `</output>`) and the truncated forms.

    With `<output_head>`/`<output_tail>` the payload is the whole region between the opening
    `<output_head>` and the closing `</output_tail>`; the v2 `[exit code N]` trailer is a suffix.
    Anything else (the final diff) is all payload.
    """
    match = _ENVELOPE_OPEN.match(content)
    if match is not None:
        if match.group("tag") == "output":
            close = content.rfind("</output>")
        else:
            close = content.rfind("</output_tail>")
            if close < match.end():
                close = content.rfind("</output_head>")
        if close >= match.end():
            return content[: match.end()], content[match.end() : close], content[close:]
    trailer = _EXIT_CODE_TRAILER.search(content)
    if trailer is not None:
        return "", content[: trailer.start()], content[trailer.start() :]
    return "", content, ""


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value[:5])
    )


class MiniSweAgentAdapter(BaseAdapter):
    name = "mini-swe-agent"
    harness = "mini-swe-agent"
    text_replies = True

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """The harness runs exactly one action a turn; anything else is a format error."""
        return len(actions) != 1

    def detect(self, source: Source) -> bool:
        doc = source.json_document()
        if isinstance(doc, dict):
            fmt = doc.get("trajectory_format")
            if isinstance(fmt, str) and fmt.startswith(FORMAT_PREFIX):
                return True
            return _dig(doc, "info", "mini_version") is not None and "messages" in doc
        # A bare list: only claim it when it speaks mini-swe-agent's grammar.
        if not _is_message_list(doc):
            return False
        return any(
            isinstance(m.get("content"), str)
            and (
                (m["role"] == "assistant" and grammars.bash_blocks(m["content"]))
                or (m["role"] == "user" and m["content"].startswith("<returncode>"))
            )
            for m in doc
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
        if isinstance(doc, list):
            doc = {"messages": doc}
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            raise RecordError(f"{where}: expected a `messages` list or a bare message list")
        info = _obj(doc.get("info"))
        raw_messages = doc["messages"]
        messages: list[Message] = []
        exit_extra: dict[str, Any] = {}
        for i, raw in enumerate(raw_messages):
            if isinstance(raw, dict) and raw.get("role") == EXIT_ROLE:
                exit_extra = _obj(raw.get("extra"))
                continue
            messages.append(parse_message(raw, f"{where} message {i}"))
        if not messages:
            raise RecordError(f"{where}: no chat messages")
        native = doc.get("instance_id")
        native_id = str(native) if native is not None else native_id_from_path(source.path)
        stats = _obj(info.get("model_stats"))
        prompt_tokens, completion_tokens = _usage_totals(raw_messages)
        exit_status = info.get("exit_status") or exit_extra.get("exit_status")
        submission = info.get("submission") or exit_extra.get("submission")
        cost = stats.get("instance_cost")
        api_calls = stats.get("api_calls")
        metadata = {
            "trajectory_format": doc.get("trajectory_format"),
            "submission": submission,
            "exit": exit_extra or None,
        }
        return TrajectoryRecord(
            trajectory_id=trajectory_id(self.name, native_id, messages),
            source_format=self.name,
            source_path=source.name,
            record_index=0,
            native_id=native_id,
            harness=self.harness,
            harness_version=_str_or_none(info.get("mini_version")),
            agent_model=_str_or_none(_dig(info, "config", "model", "model_name")),
            task=task_from_messages(messages),
            system_prompt=system_prompt(messages),
            tools=None,
            messages=messages,
            exit_status=_str_or_none(exit_status),
            resolved=resolved_from_report(source.path, native_id),
            cost_usd=as_float(cost),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            api_calls=as_count(api_calls),
            metadata=canonical_json({k: v for k, v in metadata.items() if v is not None}),
        )

    def parse_action(self, message: Message) -> list[Action]:
        if message.tool_calls:
            return [tool_call_action(c.name, c.arguments) for c in message.tool_calls]
        return grammars.bash_blocks(message.content)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_envelope(message.content)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return as_count(value) or 0


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


ADAPTER = MiniSweAgentAdapter()
