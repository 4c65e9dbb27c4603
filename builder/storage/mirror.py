"""A run folder on an object store, worked on through a local mirror.

The stages write under a local folder with today's temp-file-then-rename atomicity; this
module copies that folder to the store and back. An object store has no atomic rename, but a
single PUT of a whole object is atomic (readers see the old object, the new one, or none; S3
and GCS both promise this, multipart uploads included). So every file is uploaded in one go to
its final key, and a shard's completion marker only after its tables: a reader or a resume
that sees a marker sees the tables it vouches for. The SQLite files (request cache, batch
ledger) never leave local disk: they need file locks an object store does not have.

Local and remote copies are matched by size and modification time: after each transfer the
local file gets the object's mtime, so a later push or pull moves only what changed since.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from pyarrow import fs as pafs

from builder.storage.uri import open_uri, redacted
from builder.storage.user_cache import user_cache_root

log = logging.getLogger(__name__)

REMOTE_FILE = Path("_state") / "remote.json"
MARKERS = ("_state", "shards")
INGEST_MARKER = "_state/ingest.json"


def default_local_dir(uri: str) -> Path:
    """Where a run folder's mirror lives unless `output.local_dir` says: the user cache
    (`NAP_BUILDER_CACHE`, else ~/.cache/nap-builder), keyed by the URI."""
    root = user_cache_root()
    key = hashlib.sha256(redacted(uri).encode()).hexdigest()[:16]
    return root / "runs" / key


def synced(rel: str) -> bool:
    """Whether a mirror file belongs on the store: not SQLite, temp files or the cache."""
    parts = rel.split("/")
    name = parts[-1]
    if parts[0] == "cache" or name.startswith(".") or ".sqlite" in name:
        return False
    return rel != REMOTE_FILE.as_posix()


def is_marker(rel: str) -> bool:
    """Completion markers (a shard's, the ingest's): uploaded after every other file."""
    return tuple(rel.split("/")[:2]) == MARKERS or rel == INGEST_MARKER


def bind(local: Path, uri: str) -> None:
    """Record the store URI in the mirror so writers deep in the stages can push."""
    path = local / REMOTE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"uri": uri}))


def bound_uri(local: Path) -> str | None:
    try:
        return str(json.loads((local / REMOTE_FILE).read_text())["uri"])
    except (OSError, ValueError, KeyError):
        return None


def _remote_files(filesystem: pafs.FileSystem, base: str) -> dict[str, pafs.FileInfo]:
    selector = pafs.FileSelector(base, allow_not_found=True, recursive=True)
    infos = filesystem.get_file_info(selector)
    return {i.path[len(base) + 1 :]: i for i in infos if i.type == pafs.FileType.File}


def _stamp(path: Path, info: pafs.FileInfo) -> None:
    if info.mtime_ns is not None:
        os.utime(path, ns=(info.mtime_ns, info.mtime_ns))


def _unpushed(mine: os.stat_result, info: pafs.FileInfo) -> bool:
    """The local copy differs from its object and was written here since (push it)."""
    return mine.st_size != info.size or mine.st_mtime_ns > (info.mtime_ns or 0)


def _stale(mine: os.stat_result, info: pafs.FileInfo) -> bool:
    """The local copy is older than its object, or as old but different (pull it); a newer
    local file (written here, not pushed yet) is kept."""
    remote = info.mtime_ns or 0
    return mine.st_mtime_ns < remote or (mine.st_mtime_ns == remote and mine.st_size != info.size)


def download(filesystem: pafs.FileSystem, info: pafs.FileInfo, target: Path) -> None:
    """One object streamed into a local file (temp + rename), stamped with its mtime."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    with filesystem.open_input_stream(info.path) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(tmp, target)
    _stamp(target, info)


def pull(local: Path, uri: str) -> int:
    """Download the objects that are missing locally or newer on the store; returns how many.
    Local files newer than their object (written here, not pushed yet) are kept."""
    filesystem, base = open_uri(uri)
    count = 0
    for rel, info in sorted(_remote_files(filesystem, base).items()):
        if not synced(rel):
            continue
        target = local / rel
        if target.exists() and not _stale(target.stat(), info):
            continue
        download(filesystem, info, target)
        count += 1
    log.info("pulled %d objects from %s into %s", count, redacted(uri), local)
    return count


def _upload(filesystem: pafs.FileSystem, key: str, path: Path) -> None:
    """One file as one object at its final key (a local target gets temp + rename, so the
    same promise holds on a `file://` store)."""
    parent = key.rsplit("/", 1)[0]
    local_target = filesystem.type_name == "local"
    if local_target:
        filesystem.create_dir(parent, recursive=True)
    tmp = f"{parent}/.{key.rsplit('/', 1)[1]}.tmp-{os.getpid()}" if local_target else key
    with open(path, "rb") as src, filesystem.open_output_stream(tmp) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    if local_target:
        filesystem.move(tmp, key)
    _stamp(path, filesystem.get_file_info(key))


def upload_order(rels: Iterable[str]) -> list[str]:
    """Tables and reports first, completion markers last."""
    return sorted(set(rels), key=lambda r: (is_marker(r), r))


def push_paths(local: Path, paths: Iterable[Path]) -> None:
    """Upload these mirror files (a shard's tables, then its marker) if the mirror is bound to
    a store; a no-op for a plain local run folder."""
    uri = bound_uri(local)
    if uri is None:
        return
    filesystem, base = open_uri(uri)
    rels = [p.relative_to(local).as_posix() for p in paths]
    for rel in upload_order(r for r in rels if synced(r)):
        _upload(filesystem, f"{base}/{rel}", local / rel)


def push_all(local: Path, uri: str) -> int:
    """Upload every mirror file the store lacks or holds an older copy of, markers last."""
    filesystem, base = open_uri(uri)
    remote = _remote_files(filesystem, base)
    todo = []
    for path in local.rglob("*"):
        rel = path.relative_to(local).as_posix()
        if not path.is_file() or not synced(rel):
            continue
        info = remote.get(rel)
        if info is None or _unpushed(path.stat(), info):
            todo.append(rel)
    for rel in upload_order(todo):
        _upload(filesystem, f"{base}/{rel}", local / rel)
    log.info("pushed %d files from %s to %s", len(todo), local, redacted(uri))
    return len(todo)


def delete_remote(local: Path, folders: Iterable[str]) -> None:
    """Remove these folders of the run from the store too (a discarded ingest or config):
    markers (`_state/...`) before tables, so none is left vouching for missing tables."""
    uri = bound_uri(local)
    if uri is None:
        return
    filesystem, base = open_uri(uri)
    for folder in sorted(set(folders), key=lambda f: not f.startswith("_state/")):
        key = f"{base}/{folder}"
        if filesystem.get_file_info(key).type == pafs.FileType.File:
            filesystem.delete_file(key)
            continue
        for rel in _remote_files(filesystem, key):
            filesystem.delete_file(f"{key}/{rel}")
