"""Which texts name an object store, and the pyarrow filesystem that reads and writes them.

Credentials come only from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_ENDPOINT_URL, GOOGLE_APPLICATION_CREDENTIALS, ...), read by pyarrow itself: nothing here
logs or stores them. A URI may carry pyarrow's own query options
(`s3://bucket/run?endpoint_override=host:9000&scheme=http`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pyarrow import fs as pafs

from builder.errors import ConfigError

REMOTE_SCHEMES = frozenset({"s3", "gs", "gcs"})


def is_remote(text: str) -> bool:
    """True for an object-store URI this package syncs (file:// is a local path)."""
    return "://" in text and urlsplit(text).scheme in REMOTE_SCHEMES


def redacted(uri: str) -> str:
    """The URI without its query (options may hold an endpoint; never keys, but keep logs short)."""
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def open_uri(uri: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, base path without trailing slash) of an object-store URI; a `ConfigError`
    naming the URI when pyarrow cannot open it (unknown scheme, no GCS support built in)."""
    try:
        filesystem, base = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError, NotImplementedError) as exc:
        raise ConfigError(f"{redacted(uri)}: cannot open this filesystem URI ({exc})") from exc
    return filesystem, base.rstrip("/")
