"""Work units of a run: shards of trajectories, their inputs, and their completion markers.

A shard is a slice of one ingested trajectories file. Its NAP tables are written as
`OUT/<table>/<shard_id>.parquet` (atomically), then `OUT/_state/shards/<shard_id>.json` marks it
complete with the config hash; a resumed run skips marked shards and redoes the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from builder.run.shard_tables import SHARD_TABLES
from schemas.common import from_row
from schemas.steps import StepRecord
from schemas.trajectories import TrajectoryRecord

NAP_TABLES = (
    "candidates", "references", "judgements", "supervision", "preferences", "prefixes",
    "round_steps",
)  # fmt: skip


@dataclass(frozen=True)
class ShardPlan:
    shard_id: str
    trajectories_file: Path
    trajectory_ids: tuple[str, ...]

    @property
    def task_prefix(self) -> str:
        """The ingest task that wrote this file (its steps live in files with this prefix)."""
        return self.trajectories_file.stem.rsplit("-", 1)[0]


def plan_shards(out_dir: Path, shard_size: int) -> Iterator[ShardPlan]:
    """Shards in a deterministic order; only the id column is read here."""
    for path in sorted((out_dir / "trajectories").glob("*.parquet")):
        ids = pq.ParquetFile(path).read(columns=["trajectory_id"]).column(0).to_pylist()
        for k in range(0, len(ids), shard_size):
            chunk = tuple(ids[k : k + shard_size])
            yield ShardPlan(f"{path.stem}-{k // shard_size:04d}", path, chunk)


def pending_shards(out_dir: Path, shard_size: int, digest: str) -> tuple[list[ShardPlan], int]:
    """(shards not complete for this config hash, number of complete ones), in plan order."""
    todo, skipped = [], 0
    for plan in plan_shards(out_dir, shard_size):
        if is_complete(read_marker(out_dir, plan.shard_id), digest):
            skipped += 1
        else:
            todo.append(plan)
    return todo, skipped


def step_totals(out_dir: Path, todo: list[ShardPlan], digest: str) -> tuple[int, int]:
    """(eligible steps of the whole run, those in shards already complete), for the progress
    bar: only the id and eligibility columns of the steps files are read."""
    wanted = {tid for plan in todo for tid in plan.trajectory_ids}
    pending = 0
    for path in sorted((out_dir / "steps").glob("*.parquet")):
        table = pq.ParquetFile(path).read(columns=["trajectory_id", "eligible"])
        ids, eligible = table.column(0).to_pylist(), table.column(1).to_pylist()
        pending += sum(1 for tid, ok in zip(ids, eligible, strict=True) if ok and tid in wanted)
    done = 0
    for marker in (out_dir / "_state" / "shards").glob("*.json"):
        data = read_json(marker)
        if isinstance(data, dict) and is_complete(data, digest):
            done += int(data.get("eligible_steps") or 0)
    return pending + done, done


def load_shard(
    out_dir: Path, plan: ShardPlan
) -> tuple[dict[str, TrajectoryRecord], list[StepRecord]]:
    """The shard's trajectories (by id) and eligible steps (in trajectory, step order).

    Sliced out of its file's tables, which are read once for all the file's shards."""
    steps_files = sorted((out_dir / "steps").glob(f"{plan.task_prefix}-*.parquet"))
    wanted = plan.trajectory_ids
    trajectories = {
        row["trajectory_id"]: from_row(TrajectoryRecord, row)
        for row in SHARD_TABLES.trajectory_rows(plan.trajectories_file, wanted)
    }
    steps = [from_row(StepRecord, row) for row in SHARD_TABLES.step_rows(steps_files, wanted)]
    order = {tid: i for i, tid in enumerate(wanted)}
    steps.sort(key=lambda s: (order[s.trajectory_id], s.step_index))
    return trajectories, steps


def is_complete(marker: dict[str, Any] | None, digest: str) -> bool:
    """A shard is done for this config when its marker has the config's hash and does not
    say that some of its steps' requests failed (`complete: false`: redone on resume)."""
    return (
        marker is not None and marker.get("config_hash") == digest and marker.get("complete", True)
    )


def marker_path(out_dir: Path, shard_id: str) -> Path:
    return out_dir / "_state" / "shards" / f"{shard_id}.json"


def read_json(path: Path) -> Any:
    """A JSON file's value, or None when it is missing or torn."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_marker(out_dir: Path, shard_id: str) -> dict[str, Any] | None:
    data = read_json(marker_path(out_dir, shard_id))
    return data if isinstance(data, dict) else None


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")  # no .parquet suffix: globs skip it
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    os.replace(tmp, path)
