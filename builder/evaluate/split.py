"""The trajectories of one split of a published dataset, so eval can run on held-out ones.

A published folder (`nap-builder publish --to DIR`) holds `DIR/data/<config>/<split>-*.parquet`;
every config puts a trajectory in the same split (a hash of its id, `publish.layout.split_of`),
so the ids of a split are the union over the configs' files of that split.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from builder.errors import ConfigError
from builder.publish.splits import ID_COLUMN


def split_files(dataset: Path, split: str) -> list[Path]:
    """The Parquet files of `split` in a published folder (or in its `data/` folder)."""
    root = dataset / "data" if (dataset / "data").is_dir() else dataset
    return sorted(p for p in root.glob(f"*/{split}-*.parquet") if p.is_file())


def split_trajectories(dataset: Path, split: str) -> set[str]:
    """Every trajectory id in `split`; a clear error when the folder or the split has none."""
    dataset = Path(dataset)
    if not dataset.is_dir():
        raise ConfigError(
            f"--dataset {dataset}: not a folder (give a `nap-builder publish` folder)"
        )
    files = split_files(dataset, split)
    if not files:
        root = dataset / "data" if (dataset / "data").is_dir() else dataset
        found = sorted({p.name.split("-", 1)[0] for p in root.glob("*/*.parquet")})
        raise ConfigError(
            f"--dataset {dataset}: no Parquet file of split {split!r} under data/<config>/; "
            f"splits found: {found or 'none'}"
        )
    ids: set[str] = set()
    for path in files:
        try:
            column = pq.read_table(path, columns=[ID_COLUMN]).column(0)
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"{path}: cannot read its {ID_COLUMN} column ({exc})") from None
        ids.update(str(v) for v in column.to_pylist() if v is not None)
    return ids
