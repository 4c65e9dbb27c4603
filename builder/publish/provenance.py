"""Provenance columns of every published config: where a row's trajectory came from and what the
gate said about it, so rows can be traced and decontaminated after publishing.

From the run's `trajectories` table (joined on `trajectory_id`): the task instance
(`builder.ingest.instances`), the harness and format, the source file relative to its input (a
local path never leaves the machine), the record within it and the model that ran the
trajectory. From the run's config: the teacher and agent models where a table lacks them, and
the gate's mode and threshold. For `candidates`, the verdict of each judged candidate from the
`judgements` shard of the same name (shards are cut by trajectory, so they hold the same steps).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from builder.ingest.instances import instance_id_of

TRAJECTORY_COLUMNS = (
    "trajectory_id", "source_format", "source_path", "record_index", "native_id", "harness",
    "agent_model",
)  # fmt: skip
FROM_TRAJECTORY: tuple[tuple[str, pa.DataType], ...] = (
    ("instance_id", pa.string()),
    ("harness", pa.string()),
    ("source_format", pa.string()),
    ("source_file", pa.string()),
    ("record_index", pa.int64()),
    ("trajectory_model", pa.string()),
)
GATE: tuple[tuple[str, pa.DataType], ...] = (
    ("gate_mode", pa.string()),
    ("gate_threshold", pa.float64()),
)
VERDICT: tuple[tuple[str, pa.DataType], ...] = (
    ("similarity", pa.float64()),
    ("passed", pa.bool_()),
)
MODELS: tuple[tuple[str, pa.DataType], ...] = (
    ("teacher_model", pa.string()),
    ("agent_model", pa.string()),
)
VERDICT_KEY = ["trajectory_id", "step_index", "candidate_index"]


def provenance_fields(config: str) -> list[tuple[str, pa.DataType]]:
    """The columns `Provenance.add` gives a config (those a table already has are kept as is)."""
    fields = [*FROM_TRAJECTORY, *MODELS, *GATE]
    return [*fields, *VERDICT] if config == "candidates" else fields


class Provenance:
    """The run's trajectories (a few short columns, not the messages) and settings, to join."""

    def __init__(self, out_dir: Path, resolved: Mapping[str, Any], report: Mapping[str, Any]):
        self.out_dir = out_dir
        self.roots = _input_roots(resolved)
        found = report.get("gate")
        gate: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        cfg_gate = resolved.get("gate") or {}
        mode = gate.get("mode") or cfg_gate.get("mode")
        threshold = gate.get("threshold")
        if threshold is None:
            threshold = cfg_gate.get(
                "likelihood_threshold" if mode == "likelihood" else "threshold"
            )
        self.constants: dict[str, Any] = {
            "gate_mode": mode,
            "gate_threshold": threshold,
            "teacher_model": (resolved.get("teacher") or {}).get("model"),
            "agent_model": (resolved.get("agent") or {}).get("model"),
        }
        self.trajectories = self._load_trajectories()

    def _load_trajectories(self) -> pa.Table | None:
        from builder.publish.folder import parquet_files

        files = parquet_files(self.out_dir / "trajectories")
        if not files:
            return None
        table = ds.dataset([str(f) for f in files], format="parquet")
        names = [c for c in TRAJECTORY_COLUMNS if c in table.schema.names]
        data = table.to_table(columns=names)
        fmt = data.column("source_format").to_pylist()
        native = data.column("native_id").to_pylist() if "native_id" in names else [None] * len(fmt)
        paths = data.column("source_path").to_pylist()
        columns = {
            "instance_id": [instance_id_of(f, n) for f, n in zip(fmt, native, strict=True)],
            "harness": _column(data, "harness"),
            "source_format": fmt,
            "source_file": [relative_source(p, self.roots) for p in paths],
            "record_index": _column(data, "record_index"),
            "trajectory_model": _column(data, "agent_model"),
        }
        arrays = [pa.array(columns[name], type=kind) for name, kind in FROM_TRAJECTORY]
        ids = data.column("trajectory_id").combine_chunks()
        return pa.Table.from_arrays([ids, *arrays], names=["trajectory_id", *columns])

    def add(self, config: str, batch: pa.RecordBatch, shard: Path) -> pa.RecordBatch:
        """`batch` with the provenance columns it lacks appended (nulls where unknown)."""
        present = set(batch.schema.names)
        columns: dict[str, pa.Array] = {}
        rows = self._trajectory_rows(batch)
        for name, kind in FROM_TRAJECTORY:
            if name not in present:
                columns[name] = (
                    rows.column(name).combine_chunks() if rows is not None
                    else pa.nulls(len(batch), kind)
                )  # fmt: skip
        for name, kind in (*MODELS, *GATE):
            if name not in present:
                columns[name] = pa.array([self.constants[name]] * len(batch), type=kind)
        if config == "candidates":
            for name, array in self._verdicts(batch, shard).items():
                if name not in present:
                    columns[name] = array
        arrays = [*batch.columns, *columns.values()]
        return pa.RecordBatch.from_arrays(arrays, names=[*batch.schema.names, *columns])

    def _trajectory_rows(self, batch: pa.RecordBatch) -> pa.Table | None:
        if self.trajectories is None:
            return None
        where = pc.index_in(
            batch.column("trajectory_id"), value_set=self.trajectories["trajectory_id"]
        )
        return self.trajectories.take(where)

    def _verdicts(self, batch: pa.RecordBatch, shard: Path) -> dict[str, pa.Array]:
        """Similarity and pass of each candidate, from the judgements shard of the same name."""
        empty = {name: pa.nulls(len(batch), kind) for name, kind in VERDICT}
        sibling = self.out_dir / "judgements" / shard.name
        names = set(batch.schema.names)
        if not sibling.is_file() or not set(VERDICT_KEY) <= names:
            return empty
        judged = ds.dataset(str(sibling), format="parquet")
        if not {*VERDICT_KEY, "aggregate", "passed"} <= set(judged.schema.names):
            return empty
        control = ["is_control"] if "is_control" in judged.schema.names else []
        table = judged.to_table(columns=[*VERDICT_KEY, "aggregate", "passed", *control])
        if control:  # the raw observation's control verdict is no candidate's
            table = table.filter(pc.invert(pc.fill_null(table.column("is_control"), False)))
        keys = _keys(table)
        found = pc.index_in(_keys(pa.Table.from_batches([batch])), value_set=keys)
        return {
            "similarity": table.column("aggregate").take(found).combine_chunks().cast(pa.float64()),
            "passed": table.column("passed").take(found).combine_chunks(),
        }


def _keys(table: pa.Table) -> pa.Array:
    """One string per (trajectory, step, candidate), to join on."""
    parts = [pc.cast(table.column(c), pa.string()) for c in VERDICT_KEY]
    return pc.binary_join_element_wise(*parts, "\x1f").combine_chunks()


def _column(table: pa.Table, name: str) -> list[Any]:
    return table.column(name).to_pylist() if name in table.schema.names else [None] * len(table)


def _input_roots(resolved: Mapping[str, Any]) -> list[Path]:
    roots = []
    for item in resolved.get("inputs") or []:
        path = str(item.get("path") if isinstance(item, Mapping) else item)
        if path.startswith("/"):
            roots.append(Path(path))
    return roots


def relative_source(path: str | None, roots: list[Path]) -> str | None:
    """A source file named without local directories: relative to the input it came from
    (`samples/mini-swe-agent/x.traj.json` for input `.../samples/`), its name when no input
    holds it; Hub ids and URIs are kept."""
    if not path:
        return None
    if not path.startswith("/"):
        return path
    file = Path(path)
    for root in roots:
        if file == root:
            return file.name
        if root in file.parents:
            return str(PurePosixPath(root.name, file.relative_to(root).as_posix()))
    return file.name
