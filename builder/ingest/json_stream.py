"""JSON values read without holding a whole file: small documents parsed at once by the
stdlib (as always), large ones and arrays of trajectories built incrementally by ijson's C
backend (yajl2_c), each value capped at `MAX_RECORD_BYTES` of its text.

Peak memory is then about the largest value, not the file: a 2 GiB array of trajectories is
read one element at a time, and a single value past the cap is refused once the cap has been
read, before it is built further. The parser (C) hands over events; values are built here
(`ijson.common.ObjectBuilder`), about 20 ms of CPU per MB. The incremental parser is strict
JSON: `NaN` and `Infinity`, which Python's `json` accepts, are invalid there, and a lone
surrogate escape (`\\ud800`, refused in small files) becomes `?` (large documents and arrays
of trajectories only).
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from builder.errors import InputError
from builder.ingest.file_reading import MAX_DEPTH, check_value, parse_json

STREAM_BYTES = 64 * 1024**2  # documents up to this size are parsed at once
MAX_RECORD_BYTES = 1024**3  # the most JSON text one trajectory (value, line) may take
BUFFER = 1 << 16

Opener = Callable[[], IO[bytes]]


class _Metered(io.RawIOBase):
    """Bytes of `inner` (after `head`), failing once more than `cap` came since `mark`."""

    def __init__(self, head: bytes, inner: IO[bytes], cap: int, what: str) -> None:
        self.head, self.inner, self.cap, self.what = head, inner, cap, what
        self.seen = self.mark = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            data, self.head = self.head[: len(buffer)], self.head[len(buffer) :]
        else:
            data = self.inner.read(len(buffer))
        self.seen += len(data)
        if self.seen - self.mark > self.cap + BUFFER:
            raise InputError(
                f"{self.what}: a JSON value larger than {self.cap:,} bytes: refused "
                "(one trajectory is read whole; split the file)",
                kind="record_too_large",
            )
        buffer[: len(data)] = data
        return len(data)


def _incremental_error(exc: Exception, where: str) -> InputError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text.removeprefix("b'").removeprefix('b"')
    kind = "encoding" if "UTF8" in text else "invalid_json"
    what = "not UTF-8 text" if kind == "encoding" else "invalid JSON"
    return InputError(f"{where}: {what} ({text})", kind=kind)


def _values(stream: IO[bytes], where: str, meter: _Metered, base: int) -> Iterator[Any]:
    """Values built from the parser's events at nesting level `base` (0: the document, 1:
    each element of a top-level array). Depth is counted here, not by the parser's own
    builder, whose per-level bookkeeping grows with the square of the depth (a file of
    100,000 `[` would take gigabytes before any check could run)."""
    depth = 0
    builder: ObjectBuilder | None = None
    events = ijson.basic_parse(stream, use_float=True, buf_size=BUFFER)
    for event, value in events:
        if depth < base:  # the enclosing array itself
            if event != "start_array":
                raise InputError(f"{where}: not a JSON array", kind="wrong_shape")
            depth += 1
            continue
        if event in ("start_map", "start_array"):
            depth += 1
            if depth - base > MAX_DEPTH:
                raise InputError(
                    f"{where}: JSON nested more than {MAX_DEPTH} levels deep: refused",
                    kind="nesting_too_deep",
                )
        elif event in ("end_map", "end_array"):
            depth -= 1
            if depth < base:  # the enclosing array ended
                return
        if builder is None:
            builder = ObjectBuilder()
        builder.event(event, value)
        if depth == base:  # a value at this level is complete
            complete, builder = builder.value, None
            meter.mark = meter.seen
            yield complete
            del complete


def _incremental(opener: Opener, where: str, cap: int, base: int) -> Iterator[tuple[int, Any]]:
    """(index, value or InputError) for the values at level `base`; an error ends the file
    (after a parse error the parser cannot find the next value)."""
    with opener() as fh:
        meter = _Metered(b"", fh, cap, where)
        stream = io.BufferedReader(meter, buffer_size=BUFFER)
        values = _values(stream, where, meter, base)
        for index in itertools.count():
            label = f"{where} element {index}" if base else where
            meter.what = label
            try:
                value = next(values)
            except StopIteration:
                return
            except InputError as exc:
                yield index, exc
                return
            except ijson.JSONError as exc:
                yield index, _incremental_error(exc, label)
                return
            try:
                check_value(value, label)
                yield index, value
            except InputError as exc:
                yield index, exc
            del value


def read_document(opener: Opener, where: str, cap: int = MAX_RECORD_BYTES) -> Any:
    """The file as one JSON value: at once when small, else built incrementally (capped)."""
    with opener() as fh:
        head = fh.read(STREAM_BYTES + 1)
    if len(head) > STREAM_BYTES:
        del head
        for _, value in _incremental(opener, where, cap, 0):
            if isinstance(value, InputError):
                raise value
            return value
        raise InputError(f"{where}: empty file", kind="empty")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where}: not UTF-8 text (byte {exc.start}: {exc.reason})", kind="encoding"
        ) from exc
    del head
    if not text.strip():
        raise InputError(f"{where}: empty file", kind="empty")
    return parse_json(text, where)


def array_items(
    opener: Opener, where: str, cap: int = MAX_RECORD_BYTES
) -> Iterator[tuple[int, Any]]:
    """(index, value) for each element of a top-level JSON array, one at a time; an element
    that cannot be read comes as (index, InputError) and ends the file."""
    return _incremental(opener, where, cap, 1)


def first_item(opener: Opener, where: str, cap: int = MAX_RECORD_BYTES) -> Any:
    """The first element of a top-level array (None when it cannot be read)."""
    for _, value in array_items(opener, where, cap):
        return None if isinstance(value, InputError) else value
    return None
