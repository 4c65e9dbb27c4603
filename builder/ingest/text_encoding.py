"""Byte-order marks: what text editors put before JSON, removed before anything parses it.

A UTF-8 BOM is dropped; UTF-16 and UTF-32 text (PowerShell's `>` writes UTF-16 LE with a BOM)
is re-encoded as UTF-8 on the fly, in chunks, so streaming readers see plain UTF-8 either way.
"""

from __future__ import annotations

import codecs
import io
from typing import IO, Any

from builder.errors import InputError

# UTF-32 first: its little-endian BOM starts with UTF-16's.
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
CHUNK = 1 << 20


def byte_order_mark(head: bytes) -> tuple[bytes, str] | None:
    """(BOM, encoding) when `head` starts with one."""
    for bom, encoding in BOMS:
        if head.startswith(bom):
            return bom, encoding
    return None


class _Transcoded(io.RawIOBase):
    """UTF-16/32 bytes from `inner` handed out as UTF-8."""

    def __init__(self, inner: IO[bytes], encoding: str, name: str) -> None:
        self.inner, self.name_, self.encoding = inner, name, encoding
        self.decoder = codecs.getincrementaldecoder(encoding)()
        self.pending = b""
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending and not self.done:
            data = self.inner.read(CHUNK)
            self.done = not data
            try:
                text = self.decoder.decode(data, final=self.done)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{self.name_}: not valid {self.encoding} text "
                    f"after its byte-order mark ({exc.reason})",
                    kind="encoding",
                ) from exc
            try:
                self.pending = text.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate in UTF-16
                raise InputError(
                    f"{self.name_}: {self.encoding} text with a lone surrogate ({exc.reason})",
                    kind="encoding",
                ) from exc
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size

    def close(self) -> None:
        self.inner.close()
        super().close()


def without_bom(stream: io.BufferedReader[Any], name: str) -> IO[bytes]:
    """`stream` past its byte-order mark, as UTF-8 bytes."""
    found = byte_order_mark(stream.peek(4)[:4])
    if found is None:
        return stream
    bom, encoding = found
    stream.read(len(bom))
    if encoding == "utf-8":
        return stream
    return io.BufferedReader(_Transcoded(stream, encoding, name), buffer_size=CHUNK)
