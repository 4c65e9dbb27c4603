"""Files of a run output and of a dataset folder: reading the run's metadata, staging, swapping."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from builder.errors import PublishError

# What a publish owns in the dataset folder (and, on the Hub, in the repo): replaced as a whole.
MANAGED = ("data", "plots", "README.md", "report.json", "statistics.json")


def parquet_files(folder: Path) -> list[Path]:
    """Complete shards only: temp and marker files start with `.` or `_`."""
    if not folder.is_dir():
        return []
    files = [
        p
        for p in folder.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def copy_plots(source: Path, dest: Path) -> list[str]:
    plots = sorted(source.glob("*.svg")) if source.is_dir() else []
    if plots:
        dest.mkdir(parents=True, exist_ok=True)
    for plot in plots:
        shutil.copyfile(plot, dest / plot.name)
    return [f"plots/{p.name}" for p in plots]


def read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise PublishError(f"{path}: not valid JSON ({err}); rerun the report stage") from err
    return data if isinstance(data, dict) else {}


def read_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8").strip() or None if path.is_file() else None


def read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise PublishError(f"{path}: not valid YAML ({err})") from err
    return data if isinstance(data, dict) else {}


def swap_in(staging: Path, dest: Path) -> None:
    """Replace what an earlier publish wrote in `dest` by the staged folder."""
    for name in MANAGED:
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


def is_managed(path_in_repo: str) -> bool:
    """A repo file a publish owns: deleted from the Hub when the local layout no longer has it."""
    head = path_in_repo.split("/", 1)[0]
    return head in MANAGED
