"""Lay out a run's output tables as a Hugging Face dataset folder.

`OUT/supervision`, `OUT/preferences` and `OUT/candidates` (folders of Parquet shards) become the
configs `sft`, `preferences` and `candidates` under `data/<config>/<split>-NNNNN-of-MMMMM.parquet`.
Rows are streamed batch by batch, text is scrubbed of secrets, and each row goes to the split
chosen by a hash of its `trajectory_id`, so one trajectory never lands in two splits and every
config agrees. The code knows no table schema beyond `trajectory_id`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import yaml

from builder.errors import PublishError
from builder.publish.card import CardInputs, build_card
from builder.scrub import Scrubber

CONFIG_TABLES: dict[str, str] = {
    "sft": "supervision",
    "preferences": "preferences",
    "candidates": "candidates",
}
DEFAULT_SPLITS: dict[str, float] = {"train": 0.9, "validation": 0.05, "test": 0.05}
ID_COLUMN = "trajectory_id"
# Columns whose distinct values the card reports when a table has them.
PROVENANCE_COLUMNS = ("prompt_version", "teacher_model", "agent_model")
SHARD_NAME = "{split}-{index:05d}-of-{total:05d}.parquet"


@dataclass(frozen=True, slots=True)
class ConfigLayout:
    """What was written for one config: its Arrow schema and row count per split."""

    name: str
    schema: pa.Schema
    rows: dict[str, int]
    files: dict[str, list[str]]  # split -> paths relative to the dataset folder
    num_bytes: dict[str, int] = field(default_factory=dict)  # split -> Arrow in-memory bytes
    values: dict[str, list[str]] = field(default_factory=dict)  # PROVENANCE_COLUMNS seen


@dataclass(slots=True)
class LayoutSummary:
    """The result of `build_dataset_folder`, also the input of the dataset card."""

    dest: Path
    configs: dict[str, ConfigLayout] = field(default_factory=dict)
    split_of_trajectory: dict[str, str] = field(default_factory=dict)
    plots: list[str] = field(default_factory=list)
    redactions: dict[str, int] = field(default_factory=dict)
    empty_configs: list[str] = field(default_factory=list)  # tables present but without rows

    @property
    def files(self) -> list[str]:
        """Every data file, relative to `dest`, sorted."""
        return sorted(f for c in self.configs.values() for fs in c.files.values() for f in fs)


def check_splits(splits: Mapping[str, float]) -> dict[str, float]:
    """Split names must be words and fractions non-negative, summing to 1."""
    if not splits:
        raise PublishError("publish.splits is empty: give e.g. {train: 0.9, test: 0.1}")
    for name, fraction in splits.items():
        if not re.fullmatch(r"[A-Za-z0-9_]+", name) or fraction < 0:
            raise PublishError(f"publish.splits: bad split {name!r}: {fraction!r}")
    if not math.isclose(sum(splits.values()), 1.0, abs_tol=1e-6):
        raise PublishError(f"publish.splits fractions sum to {sum(splits.values()):g}, not 1")
    return dict(splits)


def split_of(trajectory_id: str, splits: Mapping[str, float], seed: int = 0) -> str:
    """The split of a trajectory: a sha256 of (seed, id) placed on the cumulative fractions."""
    digest = hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    cumulative = 0.0
    names = list(splits)
    for name in names:
        cumulative += splits[name]
        if point < cumulative:
            return name
    return next(n for n in reversed(names) if splits[n] > 0)


def build_dataset_folder(
    out_dir: Path,
    dest: Path,
    *,
    splits: Mapping[str, float] = DEFAULT_SPLITS,
    license: str = "mit",
    scrubber: Scrubber | None = None,
    repo_id: str | None = None,
    seed: int = 0,
    max_rows_per_shard: int = 50_000,
    batch_size: int = 1_000,
) -> LayoutSummary:
    """Write `dest` (data/, plots/, README.md) from the run output `out_dir`.

    The folder is built in `dest/.staging` and swapped in at the end, so an interrupted
    publish never leaves a half-written dataset behind the old one.
    """
    splits = check_splits(splits)
    scrubber = scrubber if scrubber is not None else Scrubber()
    sources = {c: out_dir / t for c, t in CONFIG_TABLES.items() if _parquet_files(out_dir / t)}
    if not sources:
        tables = ", ".join(CONFIG_TABLES.values())
        raise PublishError(f"{out_dir}: no Parquet shards under any of {tables}; run the pipeline")
    staging = dest / ".staging"
    shutil.rmtree(staging, ignore_errors=True)
    summary = LayoutSummary(dest=dest)
    before = dict(scrubber.counts)
    try:
        for config, source in sources.items():
            layout = _write_config(
                config, source, staging, splits, scrubber, summary.split_of_trajectory,
                seed=seed, max_rows=max_rows_per_shard, batch_size=batch_size,
            )  # fmt: skip
            if layout.rows:
                summary.configs[config] = layout
            else:  # `datasets` cannot load a config without rows: leave it out, say so
                summary.empty_configs.append(config)
        if not summary.configs:
            raise PublishError(f"{out_dir}: every table is empty, nothing to publish")
        counts = {k: v - before.get(k, 0) for k, v in scrubber.counts.items()}
        summary.redactions = {k: v for k, v in counts.items() if v}
        summary.plots = _copy_plots(out_dir / "plots", staging / "plots")
        card = build_card(_card_inputs(out_dir, summary, splits, license, repo_id))
        (staging / "README.md").write_text(card, encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _swap_in(staging, dest)
    return summary


def _card_inputs(
    out_dir: Path, summary: LayoutSummary, splits: dict[str, float], license: str, repo: str | None
) -> CardInputs:
    """What the card shows: the layout plus the run's report, config and config hash."""
    values: dict[str, set[str]] = {}
    for layout in summary.configs.values():
        for column, seen in layout.values.items():
            values.setdefault(column, set()).update(seen)
    return CardInputs(
        configs=summary.configs,
        report=_read_json(out_dir / "report.json"),
        resolved_config=_read_yaml(out_dir / "config.resolved.yaml"),
        plots=summary.plots,
        license=license,
        repo_id=repo,
        redactions=summary.redactions,
        empty_configs=summary.empty_configs,
        config_hash=_read_text(out_dir / "config.hash"),
        data_values={c: sorted(v) for c, v in values.items()},
        trajectories_per_split=_count_values(summary.split_of_trajectory, splits),
    )


def _parquet_files(folder: Path) -> list[Path]:
    """Complete shards only: temp and marker files start with `.` or `_`."""
    if not folder.is_dir():
        return []
    files = [
        p
        for p in folder.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def _write_config(
    config: str,
    source: Path,
    staging: Path,
    splits: dict[str, float],
    scrubber: Scrubber,
    assigned: dict[str, str],
    *,
    seed: int,
    max_rows: int,
    batch_size: int,
) -> ConfigLayout:
    files = _parquet_files(source)
    try:
        schema = pa.unify_schemas([pq.read_schema(f) for f in files])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise PublishError(f"{source}: shards have incompatible schemas: {err}") from err
    if ID_COLUMN not in schema.names:
        raise PublishError(f"{source}: no `{ID_COLUMN}` column, cannot split by trajectory")
    schema = schema.remove_metadata()
    folder = staging / "data" / config
    writers = {s: _ShardWriter(folder, s, schema, max_rows) for s in splits}
    dataset = ds.dataset([str(f) for f in files], schema=schema, format="parquet")
    values: dict[str, set[str]] = {c: set() for c in PROVENANCE_COLUMNS if c in schema.names}
    for batch in dataset.to_batches(batch_size=batch_size):
        batch = _scrub_batch(batch, scrubber)
        for column, seen in values.items():
            seen.update(v for v in pc.unique(batch.column(column)).to_pylist() if v)
        ids = batch.column(ID_COLUMN).to_pylist()
        names = [assigned.setdefault(i, split_of(i, splits, seed)) for i in ids]
        for split in splits:
            mask = pa.array([n == split for n in names], type=pa.bool_())
            part = batch.filter(mask)
            if part.num_rows:
                writers[split].write(part)
    files_out: dict[str, list[str]] = {}
    rows: dict[str, int] = {}
    num_bytes: dict[str, int] = {}
    for split, writer in writers.items():
        paths = writer.finish()
        if paths:  # a split without rows has no file and is not declared
            files_out[split] = [p.relative_to(staging).as_posix() for p in paths]
            rows[split] = writer.total_rows
            num_bytes[split] = writer.total_bytes
    distinct = {c: sorted(v) for c, v in values.items() if v}
    return ConfigLayout(config, schema, rows, files_out, num_bytes, distinct)


class _ShardWriter:
    """Writes one config-split as numbered shards; names get their total at `finish`."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema, max_rows: int) -> None:
        self.folder, self.split, self.schema, self.max_rows = folder, split, schema, max_rows
        self.parts: list[Path] = []
        self.total_rows = 0
        self.total_bytes = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows_in_part = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if self._writer is None or self._rows_in_part >= self.max_rows:
            self._open_next()
        assert self._writer is not None
        self._writer.write_batch(batch)
        self._rows_in_part += batch.num_rows
        self.total_rows += batch.num_rows
        self.total_bytes += batch.nbytes

    def _open_next(self) -> None:
        self._close()
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f".{self.split}-{len(self.parts):05d}.parquet.tmp"
        self.parts.append(path)
        self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self._rows_in_part = 0

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finish(self) -> list[Path]:
        self._close()
        final = []
        for index, part in enumerate(self.parts):
            name = SHARD_NAME.format(split=self.split, index=index, total=len(self.parts))
            final.append(part.rename(self.folder / name))
        return final


def _scrub_batch(batch: pa.RecordBatch, scrubber: Scrubber) -> pa.RecordBatch:
    """Scrub every string (also inside lists and structs); other columns pass through."""
    columns = []
    for column, schema_field in zip(batch.columns, batch.schema, strict=True):
        if _has_text(schema_field.type):
            values = [scrubber.scrub_value(v) for v in column.to_pylist()]
            column = pa.array(values, type=schema_field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _has_text(dtype: pa.DataType) -> bool:
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _has_text(dtype.value_type)
    if pa.types.is_struct(dtype):
        return any(_has_text(dtype.field(i).type) for i in range(dtype.num_fields))
    return False


def _copy_plots(source: Path, dest: Path) -> list[str]:
    plots = sorted(source.glob("*.png")) if source.is_dir() else []
    if plots:
        dest.mkdir(parents=True, exist_ok=True)
    for plot in plots:
        shutil.copyfile(plot, dest / plot.name)
    return [f"plots/{p.name}" for p in plots]


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise PublishError(f"{path}: not valid JSON ({err}); rerun the report stage") from err
    return data if isinstance(data, dict) else {}


def _read_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8").strip() or None if path.is_file() else None


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _count_values(assigned: Mapping[str, str], splits: Mapping[str, float]) -> dict[str, int]:
    counts = dict.fromkeys(splits, 0)
    for split in assigned.values():
        counts[split] += 1
    return counts


def _swap_in(staging: Path, dest: Path) -> None:
    """Replace what an earlier publish wrote in `dest` by the staged folder."""
    for name in ("data", "plots", "README.md"):
        old = dest / name
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()
    for item in sorted(staging.iterdir()):
        item.rename(dest / item.name)
    staging.rmdir()


def iter_folder_files(folder: Path) -> Iterator[Path]:
    """Files a dataset folder publishes (hidden staging files excluded), sorted."""
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            yield path
