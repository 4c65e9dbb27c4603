"""Safe reading of input files: what may be opened, how it is decompressed, how it is parsed.

Hostile inputs must never stop or hang an ingest, so every file goes through `check_file`
(regular, readable files only: a FIFO would block `open()` for good), every byte stream through
`open_stream` (gzip, xz, bzip2, and zstd with its frames checked to the end; a byte-order mark
dropped, UTF-16/32 re-encoded), every read is capped at `MAX_INPUT_BYTES` of decompressed
data, and every JSON value through `parse_json`, which turns `RecursionError` and nesting
deeper than `MAX_DEPTH` into an `InputError` (downstream code such as `json.dumps` and Arrow
conversion recurses, so a value that parsed is not yet safe).
"""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import json
import lzma
import os
import re
import stat
from pathlib import Path
from typing import IO, Any

from builder.errors import InputError
from builder.ingest.names import display_name
from builder.ingest.text_encoding import without_bom
from builder.ingest.zstd_frames import FrameError, check_frames

MAX_DEPTH = 200
MAX_INPUT_BYTES = 4 * 1024**3  # decompressed bytes read from one file (a bound on bombs)
GZIP_SUFFIXES = (".gz", ".gzip")
ZSTD_SUFFIXES = (".zst", ".zstd")
XZ_SUFFIXES = (".xz", ".lzma")
BZIP2_SUFFIXES = (".bz2", ".bzip2")
STREAM_SUFFIXES = GZIP_SUFFIXES + ZSTD_SUFFIXES + XZ_SUFFIXES + BZIP2_SUFFIXES
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BY_SUFFIX = {
    **dict.fromkeys(GZIP_SUFFIXES, "gzip"),
    **dict.fromkeys(ZSTD_SUFFIXES, "zstd"),
    **dict.fromkeys(XZ_SUFFIXES, "xz"),
    **dict.fromkeys(BZIP2_SUFFIXES, "bzip2"),
}
_MAGIC = ((GZIP_MAGIC, "gzip"), (ZSTD_MAGIC, "zstd"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"))


def compression(path: Path) -> str | None:
    """ "gzip", "zstd", "xz", "bzip2" or None, from the suffix or else the magic bytes (a
    renamed `.gz`)."""
    kind = _BY_SUFFIX.get(path.suffix.lower())
    if kind is not None:
        return kind
    try:
        with path.open("rb") as fh:
            magic = fh.read(6)
    except OSError:
        return None
    return next((kind for prefix, kind in _MAGIC if magic.startswith(prefix)), None)


def logical_suffix(path: Path) -> str:
    """The suffix of the content: `.jsonl` for `x.jsonl.gz`."""
    if path.suffix.lower() in STREAM_SUFFIXES:
        return Path(path.stem).suffix.lower()
    return path.suffix.lower()


def check_file(path: Path) -> InputError | None:
    """Why `path` cannot be read as an input file, or None when it can (directories pass)."""
    name = display_name(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        return _os_error(name, exc, path)
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "FIFO" if stat.S_ISFIFO(info.st_mode)
            else "socket" if stat.S_ISSOCK(info.st_mode)
            else "device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            else "special file"
        )  # fmt: skip
        return InputError(f"{name}: a {kind}, not a regular file: refused", kind="special_file")
    try:  # O_NONBLOCK: if the file was swapped for a FIFO since stat, open() must not block
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return _os_error(name, exc, path)
    os.close(fd)
    if compression(path) == "zstd" and not _has_zstd():
        return InputError(
            f"{name}: zstd-compressed, and the `zstandard` package is not installed "
            "(pip install zstandard, or decompress the file)",
            kind="zstd_unsupported",
        )
    return None


def _os_error(name: str, exc: OSError, path: Path) -> InputError:
    if exc.errno == errno.ELOOP:
        return InputError(f"{name}: symlink loop ({exc.strerror})", kind="symlink_loop")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return InputError(f"{name}: permission denied", kind="permission_denied")
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return InputError(f"{name}: broken symlink (target missing)", kind="broken_symlink")
        return InputError(f"{name}: no such file", kind="missing")
    return InputError(f"{name}: {exc.strerror or exc}", kind="io")


def _has_zstd() -> bool:
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


class _Capped(io.RawIOBase):
    """A read-only stream that fails once more than `limit` bytes have come out of it."""

    def __init__(self, inner: IO[bytes], path: Path, limit: int, codec: str | None) -> None:
        self.inner, self.path, self.limit, self.codec, self.seen = inner, path, limit, codec, 0
        self.name_ = display_name(path)
        self.ended = False  # zstd: the end was reached and the frames checked

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.inner.read(len(buffer))
        except Exception as exc:  # gzip: OSError/EOFError/zlib.error; zstd: ZstdError
            if self.codec is None:
                raise
            raise InputError(
                f"{self.name_}: corrupt or truncated {self.codec} data ({exc})", kind=self.codec
            ) from exc
        if not data and self.codec == "zstd" and not self.ended:
            self._check_frames()  # the zstd reader ends a cut file without an error
            self.ended = True
        self.seen += len(data)
        if self.seen > self.limit:
            raise InputError(
                f"{self.name_}: more than {self.limit:,} bytes (decompressed): refused",
                kind="too_large",
            )
        buffer[: len(data)] = data
        return len(data)

    def _check_frames(self) -> None:
        try:
            with open(self.path, "rb") as raw:
                check_frames(raw)
        except (FrameError, OSError) as exc:
            raise InputError(
                f"{self.name_}: corrupt or truncated zstd data ({exc})", kind="zstd"
            ) from exc

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_stream(path: Path, limit: int = MAX_INPUT_BYTES) -> IO[bytes]:
    """The file's (decompressed) bytes as a buffered stream, capped at `limit` bytes."""
    kind = compression(path)
    raw: Any  # GzipFile, zstd stream reader or file: all closed by the returned stream
    if kind == "gzip":
        raw = gzip.open(path, "rb")  # noqa: SIM115 - closed by the returned stream
    elif kind == "xz":
        raw = lzma.open(path, "rb")  # noqa: SIM115 - closed by the returned stream
    elif kind == "bzip2":
        raw = bz2.open(path, "rb")  # noqa: SIM115 - closed by the returned stream
    elif kind == "zstd":
        try:
            import zstandard
        except ImportError as exc:
            raise InputError(
                f"{display_name(path)}: zstd-compressed, and `zstandard` is not installed",
                kind="zstd_unsupported",
            ) from exc
        raw = zstandard.ZstdDecompressor().stream_reader(
            path.open("rb"), read_across_frames=True, closefd=True
        )
    else:
        plain = path.open("rb")
        if os.fstat(plain.fileno()).st_size <= limit:
            return without_bom(
                plain, display_name(path)
            )  # the size is known: no need to count bytes
        plain.close()
        raise InputError(
            f"{display_name(path)}: more than {limit:,} bytes: refused", kind="too_large"
        )
    capped = io.BufferedReader(_Capped(raw, path, limit, kind), buffer_size=1 << 20)
    return without_bom(capped, display_name(path))


def nesting_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Container depth of a parsed JSON value, walked iteratively; stops early past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def parse_json(text: str | bytes, where: str) -> Any:
    """One JSON value; bad JSON and too-deep nesting are `InputError`s naming `where`."""
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise InputError(
            f"{where}: JSON nested too deep to parse (limit {MAX_DEPTH} levels)",
            kind="nesting_too_deep",
        ) from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            kind="invalid_json",
        ) from exc
    if nesting_depth(value) > MAX_DEPTH:
        raise InputError(
            f"{where}: JSON nested more than {MAX_DEPTH} levels deep: refused",
            kind="nesting_too_deep",
        )
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else ""):
        check_value(value, where)
    return value


def check_value(value: Any, where: str) -> None:
    """Refuse a value holding a string Arrow cannot store (a lone surrogate)."""
    if _lone_surrogate(value):
        raise InputError(
            f"{where}: a string holds a lone UTF-16 surrogate (a \\udXXX escape without its "
            "pair), which is not Unicode text",
            kind="encoding",
        )


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> bool:
    """True when a string (or key) of the value cannot be UTF-8 encoded (Arrow would fail)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
