"""Claude Code session transcripts (`~/.claude/projects/*/<session>.jsonl`).

The main chain is the non-sidechain user/assistant records, ordered by walking `parentUuid`
back from the last one (file order when no record has a `parentUuid`; across a lost line the
walk goes on from the record logged before it); records left on abandoned branches are
dropped and counted. Records whose `parentUuid` links never reach the chain (a root of their
own, or a parent that is in no line) are lost data, not branches: each conversation that
has some gets a quarantine row (`unchained_records`) with the count. Sub-agent records
(`isSidechain`) become separate trajectories with `is_sidechain=True`, one per sub-agent
(`agentId`, else the chain's root).
Records of one API message (same `message.id`) merge into one assistant message: text parts
form the content, `tool_use` parts the tool calls; `thinking` parts are left out of the content
(only counted in metadata: they are not replayable through an OpenAI-shape chat). Each
`tool_result` part becomes a `tool` message answering its `tool_use_id`. `system`, `summary`
and other bookkeeping records are not part of the chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.claude_code_messages import Assembler, Record, tool_results
from builder.ingest.formats.source import Source
from schemas.trajectories import FIDELITY_RECONSTRUCTED, TrajectoryRecord

NAME = "claude-code"
CHAT_TYPES = ("user", "assistant")  # a tuple: `x in` must not hash a hostile value
# Detection reads past bookkeeping records (a resumed session opens with many `summary`
# lines, then `file-history-snapshot`s) and gives up after this many other records.
_DETECT_LINES = 30
_DETECT_MAX_LINES = 20_000


def _is_chat_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in CHAT_TYPES
        and "uuid" in value
        and "parentUuid" in value
        and isinstance(value.get("message"), dict)
    )


def _is_bookkeeping(value: Any) -> bool:
    """A record Claude Code writes around the chat (`summary`, `file-history-snapshot`...)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and value["type"] not in CHAT_TYPES
        and ("sessionId" in value or value["type"] in BOOKKEEPING_TYPES)
    )


BOOKKEEPING_TYPES = ("summary", "file-history-snapshot", "queue-operation", "system")


def _order(group: list[Record], by_uuid: dict[str, Record]) -> tuple[list[Record], int]:
    """The records of one conversation in chat order, and how many were off the chain."""
    if not any(r.get("parentUuid") for r in group):
        return group, 0
    chain: list[Record] = []
    seen: set[str] = set()
    place = {id(r): i for i, r in enumerate(group)}
    current: Record | None = group[-1]
    while current is not None and current["uuid"] not in seen:
        seen.add(current["uuid"])
        chain.append(current)
        parent = current.get("parentUuid") or current.get("logicalParentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None
        if current is None and isinstance(parent, str) and id(chain[-1]) in place:
            # the parent's line was lost (quarantined): go on from the record logged before
            earlier = group[: place[id(chain[-1])]]
            current = next((r for r in reversed(earlier) if r["uuid"] not in seen), None)
    chain.reverse()
    wanted = {id(r) for r in group}
    ordered = [r for r in chain if id(r) in wanted]
    # Parallel tool results may hang off the chain as siblings: keep them after their parent.
    position = {r["uuid"]: i for i, r in enumerate(ordered)}
    extras = [
        r for r in group
        if r["uuid"] not in seen and tool_results(r) and r.get("parentUuid") in position
    ]  # fmt: skip
    for record in sorted(extras, key=lambda r: position[r["parentUuid"]], reverse=True):
        ordered.insert(position[record["parentUuid"]] + 1, record)
    return ordered, len(group) - len(ordered)


class ClaudeCodeAdapter(BaseAdapter):
    name = NAME
    harness = "claude-code"

    def detect(self, source: Source) -> bool:
        if not source.is_jsonl:
            return False
        others = 0
        try:
            for count, (_, value) in enumerate(source.lines()):
                if _is_chat_record(value):
                    return True
                if not _is_bookkeeping(value):
                    others += 1
                if others >= _DETECT_LINES or count >= _DETECT_MAX_LINES:
                    break
        except (InputError, OSError):
            return False
        return False

    def load(self, source: Source) -> Iterator[LoadResult]:
        if not source.is_jsonl:
            error = RecordError(
                f"{source.name}: a Claude Code transcript is JSONL, one record a line"
            )
            yield quarantine(source, None, NAME, error)
            return
        records: list[Record] = []
        try:
            for index, value in source.lines():
                if isinstance(value, InputError):
                    yield quarantine(source, index, NAME, value)
                elif not isinstance(value, dict) or "type" not in value:
                    error = RecordError(f"{source.name} line {index + 1}: not a transcript record")
                    yield quarantine(source, index, NAME, error)
                elif value.get("type") in CHAT_TYPES and not _is_chat_record(value):
                    error = RecordError(
                        f"{source.name} line {index + 1}: {value['type']} record without "
                        "`uuid`, `parentUuid` or `message`"
                    )
                    yield quarantine(source, index, NAME, error)
                else:
                    records.append(value)
        except OSError as exc:
            yield quarantine(source, None, NAME, InputError(f"{source.name}: {exc}", kind="io"))
            return
        yield from self._trajectories(source, records)

    def _trajectories(self, source: Source, records: list[Record]) -> Iterator[LoadResult]:
        by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
        chat = [r for r in records if r.get("type") in CHAT_TYPES]
        main = [r for r in chat if not r.get("isSidechain")]
        groups: list[tuple[str | None, list[Record]]] = [(None, main)] if main else []
        groups += _sidechains([r for r in chat if r.get("isSidechain")], by_uuid)
        summaries = [r.get("summary") for r in records if r.get("type") == "summary"]
        for index, (agent, group) in enumerate(groups):
            try:
                record = self._record(source, index, agent, group, by_uuid, summaries)
            except (RecordError, KeyError, TypeError, AttributeError, ValueError) as exc:
                error = RecordError(
                    f"{source.name} conversation {index}: {type(exc).__name__}: {exc}"
                )
                yield quarantine(source, index, NAME, error)
                continue
            lost = _unchained(group, by_uuid)
            yield record
            if lost:
                unchained = InputError(
                    f"{source.name} conversation {index}: {lost} of {len(group)} records are "
                    "not linked to the conversation by `parentUuid` (a root of their own, or a "
                    "parent in no line) and were left out",
                    kind="unchained_records",
                )
                yield quarantine(source, index, NAME, unchained)

    def _record(
        self,
        source: Source,
        index: int,
        agent: str | None,
        group: list[Record],
        by_uuid: dict[str, Record],
        summaries: list[Any],
    ) -> TrajectoryRecord:
        ordered, dropped = _order(group, by_uuid)
        assembler = Assembler()
        for record in ordered:
            assembler.add(record)
        messages = assembler.finish()
        if not messages:
            raise RecordError("no user or assistant messages")
        session = next((r.get("sessionId") for r in group if r.get("sessionId")), None)
        native_id = f"{session}:{agent}" if agent and session else (session or agent)
        usage = assembler.usage.values()
        metadata = {
            "session_id": session,
            "agent_id": agent,
            "cwd": next((r.get("cwd") for r in group if r.get("cwd")), None),
            "off_chain_records": dropped,
            "meta_user_records": sum(1 for r in ordered if r.get("isMeta")),
            "part_counts": assembler.counts,
            "summaries": [s for s in summaries if isinstance(s, str)] if agent is None else [],
        }
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, native_id, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=index,
            native_id=native_id,
            harness=self.harness,
            harness_version=next((r.get("version") for r in group if r.get("version")), None),
            agent_model=assembler.model,
            task=assembler.task,
            system_prompt=None,
            tools=None,
            messages=messages,
            cost_usd=assembler.cost or None,
            prompt_tokens=sum(u["prompt"] for u in usage) if usage else None,
            completion_tokens=sum(u["completion"] for u in usage) if usage else None,
            api_calls=len(assembler.usage) or None,
            fidelity=FIDELITY_RECONSTRUCTED,
            is_sidechain=agent is not None,
            metadata=json.dumps(metadata, sort_keys=True, ensure_ascii=False),
        )


def _unchained(group: list[Record], by_uuid: dict[str, Record]) -> int:
    """How many of the group's records are off the chain without being on a branch of it:
    following their parents never reaches a record of the chain."""
    if not any(r.get("parentUuid") for r in group):
        return 0  # file order: nothing was dropped
    ordered, dropped = _order(group, by_uuid)
    if not dropped:
        return 0
    on_chain = {r["uuid"] for r in ordered}
    reaches: dict[str, bool] = {}
    lost = 0
    for start in group:
        if start["uuid"] in on_chain:
            continue
        path: list[str] = []
        current: Record | None = start
        verdict = False
        while current is not None:
            uuid = current["uuid"]
            if uuid in on_chain or uuid in reaches:
                verdict = uuid in on_chain or reaches[uuid]
                break
            if uuid in path:  # a loop of parents
                break
            path.append(uuid)
            parent = current.get("parentUuid") or current.get("logicalParentUuid")
            current = by_uuid.get(parent) if isinstance(parent, str) else None
        reaches.update(dict.fromkeys(path, verdict))
        lost += not verdict
    return lost


def _sidechains(
    records: list[Record], by_uuid: dict[str, Record]
) -> list[tuple[str, list[Record]]]:
    """Sidechain records grouped per sub-agent, in order of first appearance."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        key = record.get("agentId") or _root(record, by_uuid)
        groups.setdefault(str(key), []).append(record)
    return list(groups.items())


def _root(record: Record, by_uuid: dict[str, Record]) -> str:
    seen: set[str] = set()
    current = record
    while True:
        seen.add(current["uuid"])
        parent = by_uuid.get(current.get("parentUuid") or "")
        if parent is None or not parent.get("isSidechain") or parent["uuid"] in seen:
            return str(current["uuid"])
        current = parent


ADAPTER = ClaudeCodeAdapter()
