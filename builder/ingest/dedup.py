"""One copy of each trajectory: duplicate ids and identical content across inputs.

Rule: the first copy in input order is kept — inputs in the order given, directories walked
in sorted order, records in file order. The order does not depend on worker scheduling: each
worker keeps the first copy within its task, and the parent then replays the tasks in task
order and drops later copies from the shards of later tasks. Every dropped copy becomes a
quarantine row (`duplicate_id` or `duplicate_content`) that names the copy that was kept.

"Identical content" is the chat itself (roles, contents, tool calls): the same run exported
under another id, or a copied file whose id comes from its name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.ingest.formats.base import hash_text
from builder.storage.parquet_shards import write_table_atomic
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import Message, TrajectoryRecord


def content_key(messages: Sequence[Message]) -> str:
    """A hash of what the agent and the model exchanged, whatever the format or native id."""
    digest = hashlib.sha256()
    for m in messages:
        digest.update(b"\0" + m.role.encode() + b"\1")
        hash_text(digest, m.content)
        for c in m.tool_calls:
            hash_text(digest, f"\2{c.name}\3{c.arguments}")
    return digest.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Copy:
    """What the parent needs to know about a kept trajectory to dedup across tasks."""

    trajectory_id: str
    content: str
    source_path: str
    record_index: int
    source_format: str
    steps: int = 0
    eligible: int = 0

    @classmethod
    def of(cls, record: TrajectoryRecord) -> Copy:
        return cls(
            record.trajectory_id,
            content_key(record.messages),
            record.source_path,
            record.record_index,
            record.source_format,
        )


@dataclass
class Registry:
    """The copies kept so far; `claim` says whether a new one is a duplicate of them."""

    by_id: dict[str, Copy] = field(default_factory=dict)
    by_content: dict[str, Copy] = field(default_factory=dict)

    def claim(self, copy: Copy) -> QuarantineRecord | None:
        """None when `copy` is new (and now kept); else the quarantine row of the duplicate."""
        kept = self.by_id.get(copy.trajectory_id)
        kind = "duplicate_id"
        if kept is None:
            kept = self.by_content.get(copy.content)
            kind = "duplicate_content"
        if kept is None:
            self.by_id[copy.trajectory_id] = copy
            self.by_content.setdefault(copy.content, copy)
            return None
        what = "trajectory id" if kind == "duplicate_id" else "content (under another id)"
        return QuarantineRecord(
            copy.source_path,
            copy.record_index,
            copy.source_format,
            kind,
            f"{copy.source_path} record {copy.record_index}: same {what} as "
            f"{kept.source_path} record {kept.record_index} (trajectory {kept.trajectory_id}), "
            "which is kept (first copy in input order)",
        )


def drop_from_shards(out_dir: Path, prefix: str, trajectory_ids: set[str]) -> None:
    """Remove these trajectories and their steps from the shards of one task (`prefix`)."""
    wanted = list(trajectory_ids)
    for table in ("trajectories", "steps"):
        for path in sorted((out_dir / table).glob(f"{prefix}-*.parquet")):
            data = pq.read_table(path)
            import pyarrow.compute as pc  # ~45 ms to import: only when there are duplicates

            keep = pc.invert(
                pc.is_in(data.column("trajectory_id"), value_set=pa.array(wanted, pa.string()))
            )
            kept = data.filter(keep)
            if kept.num_rows == data.num_rows:
                continue
            if kept.num_rows == 0:
                path.unlink()
            else:
                write_table_atomic(kept, path)
