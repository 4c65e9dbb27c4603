"""File names as data: any path rendered as text that can be stored, logged and printed.

On Linux a file name is bytes; Python hands undecodable bytes over as lone surrogates
(`os.fsdecode`), which Arrow, JSON and UTF-8 logs refuse. Every name an ingest stores or
prints goes through `display_name`: undecodable bytes become `\\xNN` (as `ls -b` shows them)
and control characters their escapes, so one odd name never fails the tables of the good files.
"""

from __future__ import annotations

from pathlib import Path

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def safe_text(text: str) -> str:
    """`text` as storable, printable UTF-8: surrogate-escaped bytes as `\\xNN`, other lone
    surrogates as `\\uXXXX`, control characters escaped; printable text is unchanged."""
    if text.isprintable():
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(_ESCAPES.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))
    return "".join(out)


def display_name(path: Path | str) -> str:
    """The name of `path` as it goes into tables, logs and messages."""
    return safe_text(str(path))
