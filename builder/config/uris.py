"""Filesystem URIs in `output.dir`, `cache.dir` and `inputs`.

`file://` works everywhere a path does and becomes that path. `output.dir` and inputs may also
name an object store (`s3://`, `gs://`): the run works on a local mirror that is synced to
the store (`builder.storage`). `cache.dir` must stay local: the request cache is SQLite in WAL
mode, which needs file locks an object store does not have. Other schemes in inputs (`hf://`,
...) are left to the adapters that read them.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from builder.errors import ConfigError
from builder.storage.uri import is_remote


def local_path(text: str, key: str, *, others: bool = False, stores: bool = False) -> str:
    """`text` as a local path: a `file://` URI becomes its path, a plain path is unchanged.
    With `stores`, object-store URIs pass unchanged; with `others`, any other scheme does
    (inputs may name `hf://`); otherwise another scheme is a `ConfigError` naming `key`."""
    if "://" not in text:
        return text
    parts = urlsplit(text)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"{key}: {text!r} names host {parts.netloc!r}; write file:///path")
        return unquote(parts.path)
    if others or (stores and is_remote(text)):
        return text
    if is_remote(text):
        raise ConfigError(
            f"{key}: {text!r}: the request cache is SQLite and needs file locks, which object "
            "stores do not have; give a local folder (each machine keeps its own cache). "
            "See README, 'Outputs on object stores'."
        )
    raise ConfigError(f"{key}: {text!r}: unknown filesystem scheme {parts.scheme!r}")
