"""`nap-builder export OUT --to adp DIR`: the canonical trajectories of an ingest or run folder
as Agent Data Protocol standardized trajectories (`builder.ingest.formats.adp_items`).

Streams `trajectories` shard by shard and writes `DIR/full_std.jsonl` (ADP's name for a whole
standardized dataset) atomically. Each trajectory's `details.nap_builder` links its steps to the
ADP content (`steps`: step index, content index of the observation, tool call id, eligible) and,
for a run folder, the selected compressions of each step (`supervision`: target, rendered text,
rank, similarity, length reward, whether it is the `unchanged` fallback). Texts are scrubbed
of secrets as `publish` does (the run's `scrub` settings) unless `scrub=False`.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builder.errors import ConfigError
from builder.ingest.formats.adp_items import (
    DETAILS,
    SCHEMA_VERSION,
    TRAJECTORY_FIELDS,
    to_content,
)
from schemas.common import from_row
from schemas.trajectories import TrajectoryRecord

FILE_NAME = "full_std.jsonl"
SUPERVISION_COLUMNS = (
    "trajectory_id", "step_index", "candidate_index", "rank", "source", "target", "rendered",
    "similarity", "length_reward", "is_fallback", "raw_tokens", "rendered_tokens",
)  # fmt: skip
STEP_COLUMNS = ("trajectory_id", "step_index", "observation_message_index", "eligible")


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    trajectories: int
    steps: int
    supervision_rows: int


def _tables(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet")) if folder.is_dir() else []


def _rows(folder: Path, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    for path in _tables(folder):
        parquet = pq.ParquetFile(path)
        wanted = [c for c in columns if c in parquet.schema_arrow.names]
        for batch in parquet.iter_batches(batch_size=256, columns=wanted):
            yield from batch.to_pylist()


def _grouped(folder: Path, columns: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _rows(folder, columns):
        groups[row.pop("trajectory_id")].append(row)
    return groups


def adp_trajectory(
    record: TrajectoryRecord,
    steps: list[dict[str, Any]],
    supervision: list[dict[str, Any]],
) -> dict[str, Any]:
    """One ADP standardized trajectory, with its steps and supervision linked in `details`."""
    extra: dict[str, Any] = {"version": 1}
    content, positions = to_content(record.messages, extra)
    fields = {name: getattr(record, name) for name in TRAJECTORY_FIELDS}
    extra["trajectory"] = fields
    by_step: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in supervision:
        by_step[int(row.pop("step_index"))].append(row)
    links = []
    for step in sorted(steps, key=lambda s: s["step_index"]):
        index = positions[step["observation_message_index"]]
        link = {
            "step_index": step["step_index"],
            "content_index": index,
            "tool_call_id": content[index].get("tool_call_id"),
            "eligible": step.get("eligible"),
        }
        rows = sorted(by_step.get(step["step_index"], []), key=lambda r: r.get("rank") or 0)
        if rows:
            link["supervision"] = rows
        links.append(link)
    extra["steps"] = links
    trajectory: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "id": record.trajectory_id,
                                  "content": content}  # fmt: skip
    if any(item["class_"] == "code_action" for item in content):
        trajectory["available_code_languages"] = ["bash"]
    trajectory["details"] = {DETAILS: extra}
    return trajectory


def export_adp(out_dir: Path, to: Path, *, scrub: bool = True) -> ExportSummary:
    """Write `to/full_std.jsonl` from `out_dir`'s tables (see the module docstring)."""
    if not _tables(out_dir / "trajectories"):
        raise ConfigError(
            f"{out_dir}: no trajectories table (trajectories/*.parquet); "
            "export reads the folder of `nap-builder ingest --out` or of a run"
        )
    scrubber = _scrubber(out_dir) if scrub else None
    steps = _grouped(out_dir / "steps", STEP_COLUMNS)
    supervision = _grouped(out_dir / "supervision", SUPERVISION_COLUMNS)
    to.mkdir(parents=True, exist_ok=True)
    target = to / FILE_NAME
    temporary = to / f".{FILE_NAME}.tmp-{os.getpid()}"
    counts = [0, 0, 0]
    with temporary.open("w", encoding="utf-8") as out:
        for row in _rows(out_dir / "trajectories", tuple(TrajectoryRecord.__dataclass_fields__)):
            record = from_row(TrajectoryRecord, row)
            if scrubber is not None:
                record = scrubber.scrub_trajectory(record)
            mine = steps.get(record.trajectory_id, [])
            rows = supervision.get(record.trajectory_id, [])
            out.write(json.dumps(adp_trajectory(record, mine, rows), ensure_ascii=False) + "\n")
            counts = [counts[0] + 1, counts[1] + len(mine), counts[2] + len(rows)]
    temporary.replace(target)
    return ExportSummary(target, *counts)


def _scrubber(out_dir: Path) -> Any:
    from builder.publish.command import read_settings  # the run's scrub settings, as publish
    from builder.scrub import Scrubber

    settings = read_settings(out_dir)
    return Scrubber(emails=settings.emails) if settings.scrub else None
