"""Filesystem URIs in `output.dir`, `cache.dir` and `inputs`: `file://` works everywhere a path
does; object stores (`s3://`, `gs://`, ...) for output and cache are refused with the way to
use them (inputs keep passing other URIs to the adapters unchanged).

Why not write to object stores directly: a run's guarantees rest on POSIX semantics. A table
part is written to a temp file and renamed into place (readers see all of it or nothing), a
shard's marker is written after its tables the same way, and the request cache is SQLite in
WAL mode, which needs file locks. S3 and GCS have no rename (a "move" is copy + delete, not
atomic) and no locks, so those promises would silently weaken. Mount the bucket instead
(mountpoint-s3, gcsfuse, s3fs) and give the mounted path with the cache on local disk, or
write to local disk and copy the finished run folder (`nap-builder publish` reads it there).
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from builder.errors import ConfigError


def local_path(text: str, key: str, *, others: bool = False) -> str:
    """`text` as a local path: a `file://` URI becomes its path, a plain path is unchanged, any
    other URI scheme is a `ConfigError` naming `key` (or, with `others`, left to the reader:
    inputs may name `hf://` and other sources their adapters read)."""
    if "://" not in text:
        return text
    parts = urlsplit(text)
    if others and parts.scheme != "file":
        return text
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"{key}: {text!r} names host {parts.netloc!r}; write file:///path")
        return unquote(parts.path)
    raise ConfigError(
        f"{key}: {text!r}: {parts.scheme}:// is not read or written directly (object stores "
        "have no atomic rename for table parts and shard markers, no locks for the request "
        "cache); mount the bucket (mountpoint-s3, gcsfuse, s3fs) and give the mounted path, or "
        "copy the data to local disk. See README, 'Running on a cluster'."
    )
