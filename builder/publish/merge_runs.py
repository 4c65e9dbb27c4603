"""Several run folders (round 0 and online rounds) as one, so they publish as one dataset.

The rounds are taken in order (round, then the order given); rows of the training tables that
are the same (trajectory, step, target; a preference pair by its chosen and rejected texts)
are kept once, from the earliest round: the compressor's prompt holds no history, so such a
row is the same training example whichever context passed it. `candidates` and `judgements`
keep every round's rows (each with its round: the verdict differs by context). Each run's
shards are written as `r<k>-<shard>`, so a candidates shard still finds its judgements shard.
The merged folder takes the earliest round's config (with every run's inputs), report and
plots, so publish settings (splits, seed, licence) are that run's.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from builder.errors import PublishError
from builder.publish.folder import parquet_files, read_yaml
from builder.storage.parquet_shards import write_table_atomic

DEDUP_KEYS: dict[str, tuple[str, ...]] = {
    "supervision": ("trajectory_id", "step_index", "target"),
    "preferences": ("trajectory_id", "step_index", "chosen", "rejected"),
}
COUNTED = ("supervision", "preferences", "candidates")
KEPT_AS_IS = ("candidates", "judgements", "trajectories")
COPIED = ("report.json", "config.hash", "plots")


@dataclass
class RunRound:
    """One run folder's round and what it brought to the merged dataset."""

    folder: str  # the folder's name only: no local path reaches the card
    round: int
    prefix_mode: str
    prefix_compressor: str | None
    config_hash: str | None
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows kept
    duplicates: dict[str, int] = field(default_factory=dict)  # table -> rows dropped as seen

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_round(out_dir: Path) -> RunRound:
    """A run folder's round, from its resolved config (a run written before rounds: 0, raw)."""
    resolved = read_yaml(out_dir / "config.resolved.yaml")
    replay = resolved.get("replay") or {}
    mode = str(replay.get("prefix") or "raw")
    number = replay.get("round")
    digest = out_dir / "config.hash"
    return RunRound(
        folder=out_dir.name,
        round=int(number) if number is not None else (0 if mode == "raw" else 1),
        prefix_mode=mode,
        prefix_compressor=replay.get("prefix_compressor"),
        config_hash=digest.read_text().strip() if digest.is_file() else None,
    )


def online_rounds(out_dir: Path) -> list[RunRound]:
    """One run folder's round with its row counts, for the card; none for the offline round
    (its card has no `Rounds` section)."""
    info = run_round(out_dir)
    if info.round == 0 and info.prefix_mode == "raw":
        return []
    for table in COUNTED:
        files = parquet_files(out_dir / table)
        info.rows[table] = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return [info]


def merge_runs(out_dirs: Sequence[Path], dest: Path) -> list[RunRound]:
    """Write `dest` as one run folder holding every run's rows (see the module)."""
    for out_dir in out_dirs:
        if not out_dir.is_dir():
            raise PublishError(f"{out_dir}: no such run output directory")
    if len({d.resolve() for d in out_dirs}) < len(out_dirs):
        raise PublishError("the same run folder is given twice")
    order = sorted(range(len(out_dirs)), key=lambda k: run_round(out_dirs[k]).round)
    runs = [(out_dirs[k], run_round(out_dirs[k])) for k in order]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    seen: dict[str, set[bytes]] = {t: set() for t in DEDUP_KEYS}
    for k, (out_dir, info) in enumerate(runs):
        for table in (*DEDUP_KEYS, *KEPT_AS_IS):
            for file in parquet_files(out_dir / table):
                data = _with_round(pq.read_table(file), table, info)
                if table in DEDUP_KEYS:
                    data, dropped = _unseen(data, DEDUP_KEYS[table], seen[table])
                    info.duplicates[table] = info.duplicates.get(table, 0) + dropped
                if table in COUNTED:
                    info.rows[table] = info.rows.get(table, 0) + data.num_rows
                write_table_atomic(data, dest / table / f"r{k}-{file.name}")
    _copy_metadata([d for d, _ in runs], dest)
    return [info for _, info in runs]


def _with_round(data: pa.Table, table: str, info: RunRound) -> pa.Table:
    """A shard of a run written before rounds gets its round and prefix mode as columns."""
    if table == "trajectories":
        return data
    for name, value, kind in (
        ("round", info.round, pa.int64()),
        ("prefix_mode", info.prefix_mode, pa.string()),
    ):
        if name not in data.column_names:
            data = data.append_column(name, pa.array([value] * data.num_rows, kind))
    return data


def _unseen(data: pa.Table, keys: tuple[str, ...], seen: set[bytes]) -> tuple[pa.Table, int]:
    """The rows whose key was not seen in an earlier shard or round (now seen), and how many
    were dropped."""
    missing = [k for k in keys if k not in data.column_names]
    if missing:
        raise PublishError(f"a table to merge has no {', '.join(missing)} column")
    keep = []
    for row in zip(*(data.column(k).to_pylist() for k in keys), strict=True):
        digest = hashlib.sha256(repr(row).encode()).digest()
        keep.append(digest not in seen)
        seen.add(digest)
    mask = pa.array(keep, pa.bool_())
    return data.filter(mask), data.num_rows - int(pc.sum(mask).as_py() or 0)


def _copy_metadata(out_dirs: Iterable[Path], dest: Path) -> None:
    """The first run's report, hash and plots; its resolved config with every run's inputs."""
    dirs = list(out_dirs)
    first = dirs[0]
    for name in COPIED:
        source = first / name
        if source.is_dir():
            shutil.copytree(source, dest / name)
        elif source.is_file():
            shutil.copyfile(source, dest / name)
    resolved = read_yaml(first / "config.resolved.yaml")
    inputs: list[Any] = []
    for out_dir in dirs:
        for item in read_yaml(out_dir / "config.resolved.yaml").get("inputs") or []:
            if item not in inputs:
                inputs.append(item)
    if resolved:
        resolved["inputs"] = inputs
        text = yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True)
        (dest / "config.resolved.yaml").write_text(text, encoding="utf-8")
