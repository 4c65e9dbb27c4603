"""`adp`: Agent Data Protocol standardized trajectories (ADP's `*_std.json` / `*_std.jsonl`,
and what `nap-builder export --to adp` writes).

A file is a JSON list of trajectories or JSON Lines, one `{schema_version?, id, content,
details}` each. Content is mapped back to chat messages by `adp_items.from_content`. A
trajectory `nap-builder` exported carries its canonical fields in `details.nap_builder`: it is
read back with its original format (`source_format`), harness and metadata, so its steps are
built by that format's adapter and equal the ones the export came from. Any other ADP
trajectory is format `adp`: tool calls are its actions (a bash `code_action` is a `bash` call),
tool results its observations.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from builder.errors import InputError, RecordError
from builder.ingest.formats.adp_items import DETAILS, TRAJECTORY_FIELDS, from_content
from builder.ingest.formats.base import (
    BaseAdapter,
    LoadResult,
    canonical_json,
    quarantine,
    trajectory_id,
)
from builder.ingest.formats.source import Source
from schemas.trajectories import FIDELITY_RECONSTRUCTED, TrajectoryRecord

NAME = "adp"


def is_trajectory(value: Any) -> bool:
    content = value.get("content") if isinstance(value, dict) else None
    return (
        isinstance(content, list)
        and "id" in value
        and all(isinstance(i, dict) and isinstance(i.get("class_"), str) for i in content[:5])
    )


class AdpAdapter(BaseAdapter):
    name = NAME
    harness = "adp"

    def detect(self, source: Source) -> bool:
        if source.is_jsonl:
            return is_trajectory(source.first_value())
        document = source.json_document()
        if isinstance(document, list):
            return bool(document) and is_trajectory(document[0])
        return is_trajectory(document)

    def load(self, source: Source) -> Iterator[LoadResult]:
        if source.is_jsonl:
            items: Iterator[tuple[int, Any]] = source.lines()
        else:
            try:
                document = source.document()
            except InputError as exc:
                yield quarantine(source, None, NAME, exc)
                return
            items = enumerate(document if isinstance(document, list) else [document])
        for index, value in items:
            if isinstance(value, InputError):
                yield quarantine(source, index, NAME, value)
                continue
            try:
                yield self._record(source, index, value)
            except (RecordError, KeyError, TypeError, AttributeError, ValueError) as exc:
                error = RecordError(f"{source.name} record {index}: {type(exc).__name__}: {exc}")
                yield quarantine(source, index, NAME, error)

    def _record(self, source: Source, index: int, value: Any) -> TrajectoryRecord:
        if not is_trajectory(value):
            raise RecordError("not an ADP trajectory (`id` and a `content` list of `class_` items)")
        found = value.get("details")
        details: dict[str, Any] = found if isinstance(found, dict) else {}
        mine = details.get(DETAILS)
        extra: dict[str, Any] = mine if isinstance(mine, dict) else {}
        counts: dict[str, int] = {}
        messages = from_content(value["content"], extra, counts)
        if not messages:
            raise RecordError("empty `content`")
        fields = extra.get("trajectory") if isinstance(extra.get("trajectory"), dict) else None
        if fields is not None and _known_format(fields.get("source_format")):
            return self._restored(source, index, fields, messages, str(value["id"]))
        native_id = str(value["id"])
        metadata = {"adp_schema_version": value.get("schema_version"), "details": details,
                    "counts": counts}  # fmt: skip
        return TrajectoryRecord(
            trajectory_id=trajectory_id(NAME, native_id, messages),
            source_format=NAME,
            source_path=source.name,
            record_index=index,
            native_id=native_id,
            harness=self.harness,
            harness_version=None,
            agent_model=None,
            task=next((m.content for m in messages if m.role == "user"), None),
            system_prompt=next((m.content for m in messages if m.role == "system"), None),
            tools=None,
            messages=messages,
            fidelity=FIDELITY_RECONSTRUCTED,
            metadata=canonical_json(metadata),
        )

    def _restored(
        self, source: Source, index: int, fields: dict[str, Any], messages: list[Any], stored: str
    ) -> TrajectoryRecord:
        """A trajectory this builder exported: its own fields back, and its id only when the
        messages read hash to it (formats hash with or without their native id), else the
        recomputed one: a lossy mapping shows as a new id, never a false one."""
        kept = {k: fields.get(k) for k in TRAJECTORY_FIELDS if k in fields}
        fmt = str(kept.pop("source_format"))
        ids = [
            trajectory_id(fmt, kept.get("native_id"), messages),
            trajectory_id(fmt, None, messages),
        ]
        return TrajectoryRecord(
            trajectory_id=stored if stored in ids else ids[0],
            source_format=fmt,
            source_path=source.name,
            record_index=index,
            messages=messages,
            **{"fidelity": FIDELITY_RECONSTRUCTED, "metadata": "{}", **_defaults(kept)},
        )


def _defaults(kept: dict[str, Any]) -> dict[str, Any]:
    """The record fields that have no default, filled when an export left them out."""
    required = ("native_id", "harness", "harness_version", "agent_model", "task",
                "system_prompt", "tools")  # fmt: skip
    return {**{k: None for k in required}, "harness": NAME, **kept}


def _known_format(name: Any) -> bool:
    from builder.ingest.formats import format_names  # the registry imports this module

    return isinstance(name, str) and name != NAME and name in format_names()


ADAPTER = AdpAdapter()
