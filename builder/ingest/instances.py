"""Instance ids: which trajectories belong to which task instance, and decontamination.

A task instance (`django__django-10999`) is what an evaluation set lists. Formats whose harness
runs benchmark instances record its id: mini-swe-agent (`instance_id`, else the file name its
batch runner gives a trajectory), SWE-agent (`replay_config`'s problem statement id, else the
`.traj` file name), chat-message rows and Hub datasets (`instance_id` or the mapped id column)
and OpenHands evaluation output (`instance_id`, or the resolver's issue). The other formats log
sessions (Claude Code, ATIF, the OpenHands SDK, LLM logs): their ids name a session, not an
instance, so their trajectories have none.

`exclude_instances` drops every trajectory of the listed instances at ingest, before any model
request; the named sets SWE-bench Verified and SWE-bench Lite ship with the builder
(`instance_sets/`, sources in `instance_sets/SOURCES.md`), and a run that keeps one of their
instances is warned.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from builder.errors import ConfigError

INSTANCE_FORMATS = frozenset(
    {"mini-swe-agent", "swe-agent", "chat-messages", "hf-dataset", "openhands-v0"}
)
NAMED_SETS = {"swe-bench-verified": "SWE-bench Verified", "swe-bench-lite": "SWE-bench Lite"}
WATCHED_SETS = tuple(NAMED_SETS)  # a run keeping one of their instances is warned


def instance_id_of(source_format: str | None, native_id: str | None) -> str | None:
    """The task instance of a trajectory, or None where its format logs sessions, not instances."""
    if not native_id or source_format not in INSTANCE_FORMATS:
        return None
    return native_id


@functools.cache
def named_set(name: str) -> frozenset[str]:
    """The ids of a shipped set (`swe-bench-verified`, `swe-bench-lite`)."""
    if name not in NAMED_SETS:
        known = ", ".join(NAMED_SETS)
        raise ConfigError(f"exclude_instances: unknown named set {name!r}; known sets: {known}")
    text = resources.files("builder.ingest").joinpath(f"instance_sets/{name}.txt").read_text()
    return frozenset(_id_lines(text, name))


def read_id_file(path: Path) -> list[str]:
    """Ids in a file: one per line (`#` comments), a JSON list, or JSONL rows with `instance_id`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"exclude_instances: cannot read {path}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"exclude_instances: {path} is not a JSON list ({exc})") from None
        if not all(isinstance(item, str) and item.strip() for item in data):
            raise ConfigError(f"exclude_instances: {path} must be a JSON list of id strings")
        return [item.strip() for item in data]
    if stripped.startswith("{"):
        return _jsonl_ids(text, path)
    return _id_lines(text, str(path))


def _jsonl_ids(text: str, path: Path) -> list[str]:
    ids = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(
                f"exclude_instances: {path} line {number}: not JSON ({exc})"
            ) from None
        value = row.get("instance_id") if isinstance(row, dict) else None
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"exclude_instances: {path} line {number}: no `instance_id` string")
        ids.append(value.strip())
    return ids


def _id_lines(text: str, where: str) -> list[str]:
    ids = []
    for number, line in enumerate(text.splitlines(), 1):
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        if any(c.isspace() for c in item):
            raise ConfigError(f"exclude_instances: {where} line {number}: {item!r} has spaces")
        ids.append(item)
    return ids


def watched_sets_of(instance_id: str | None) -> list[str]:
    """The shipped evaluation sets that list this instance."""
    if not instance_id:
        return []
    return [name for name in WATCHED_SETS if instance_id in named_set(name)]


def run_instance_ids(out_dir: Path) -> dict[str, str]:
    """trajectory_id -> instance id for the trajectories of a run (or ingest) folder that have
    one, read from its `trajectories` table (three short columns, never the messages)."""
    import polars as pl

    folder = out_dir / "trajectories"
    if not any(folder.glob("*.parquet")):
        return {}
    rows = pl.scan_parquet(folder / "*.parquet").select(
        "trajectory_id", "source_format", "native_id"
    )
    found = {}
    for tid, fmt, native in rows.collect().iter_rows():
        instance = instance_id_of(fmt, native)
        if instance is not None:
            found[tid] = instance
    return found
