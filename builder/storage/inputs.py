"""Inputs on object stores: a file or folder URI copied to local disk before ingest.

The format adapters read local files (JSONL line by line, SQLite, Parquet), so an `s3://` or
`gs://` input is listed and streamed into a local copy keyed by the URI, once: an object whose
size and mtime match the copy is not downloaded again. Globs are not expanded on the store;
name a file or a folder (every object under it is copied, keeping the layout).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from pyarrow import fs as pafs

from builder.errors import ConfigError
from builder.storage.mirror import default_local_dir, download
from builder.storage.uri import is_remote, open_uri, redacted

log = logging.getLogger(__name__)


def input_copy_dir(uri: str) -> Path:
    """The local copy of an input URI, beside the run mirrors in the user cache."""
    key = hashlib.sha256(redacted(uri).encode()).hexdigest()[:16]
    return default_local_dir(uri).parent.parent / "inputs" / key


def _fetch(filesystem: pafs.FileSystem, info: pafs.FileInfo, target: Path) -> bool:
    if target.exists():
        mine = target.stat()
        if mine.st_size == info.size and mine.st_mtime_ns == (info.mtime_ns or 0):
            return False
    download(filesystem, info, target)
    return True


def localize_input(path: str) -> str:
    """A local path for an input: object-store URIs are copied (file or folder), anything
    else (local paths, `hf://`, Hub ids) is returned unchanged."""
    if not is_remote(path):
        return path
    filesystem, base = open_uri(path)
    root = input_copy_dir(path)
    info = filesystem.get_file_info(base)
    if info.type == pafs.FileType.File:
        name = base.rsplit("/", 1)[-1]
        fetched = _fetch(filesystem, info, root / name)
        log.info("input %s: %s", redacted(path), "downloaded" if fetched else "local copy current")
        return str(root / name)
    if info.type != pafs.FileType.Directory:
        raise ConfigError(f"input {redacted(path)}: no such object or prefix on the store")
    selector = pafs.FileSelector(base, recursive=True)
    files = [i for i in filesystem.get_file_info(selector) if i.type == pafs.FileType.File]
    if not files:
        raise ConfigError(f"input {redacted(path)}: the prefix holds no objects")
    count = sum(_fetch(filesystem, i, root / i.path[len(base) + 1 :]) for i in files)
    log.info("input %s: %d of %d objects downloaded", redacted(path), count, len(files))
    return str(root)
