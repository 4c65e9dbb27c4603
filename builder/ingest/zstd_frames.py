"""Where a zstd file's last frame ends, read from the frame and block headers (RFC 8878).

The `zstandard` stream reader returns the data of a file cut inside a frame as if it were
whole, without an error: an ingest would read half a trajectory dump and call it done. Walking
the headers (no decompression: each block header says how far to jump) tells a file that ends
at a frame boundary from one cut short, as gzip's own reader does at its end.
"""

from __future__ import annotations

import io
from typing import IO

FRAME_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50  # the 16 values 0x184D2A50..5F
_DICT_ID_BYTES = (0, 1, 2, 4)
_CONTENT_SIZE_BYTES = (0, 2, 4, 8)  # by Frame_Content_Size_flag (flag 0: 1 byte if single segment)
_RLE, _RESERVED = 1, 3
TRUNCATED = "the file ends inside a frame"


class FrameError(ValueError):
    """The compressed bytes do not end where a zstd frame ends."""


def check_frames(stream: IO[bytes]) -> int:
    """The number of frames in `stream` (a seekable file, read from where it is to its end);
    raises `FrameError` when it ends inside a frame or holds something that is not a frame."""
    frames = 0
    while True:
        head = stream.read(4)
        if not head:
            return frames
        if len(head) < 4:
            raise FrameError(TRUNCATED)
        magic = _int(head)
        if magic & 0xFFFFFFF0 == SKIPPABLE_MAGIC:
            _skip(stream, _int(_read(stream, 4)))
        elif magic == FRAME_MAGIC:
            _frame(stream)
        else:
            raise FrameError(f"no zstd frame at byte {stream.tell() - 4} (magic {magic:#010x})")
        frames += 1


def _frame(stream: IO[bytes]) -> None:
    descriptor = _read(stream, 1)[0]
    content_size_flag, single_segment = descriptor >> 6, descriptor >> 5 & 1
    if descriptor & 0x08:
        raise FrameError("reserved bit set in a frame header")
    header = (0 if single_segment else 1) + _DICT_ID_BYTES[descriptor & 0x03]
    header += _CONTENT_SIZE_BYTES[content_size_flag] or single_segment
    _skip(stream, header)
    last = False
    while not last:
        block = _int(_read(stream, 3))
        last, kind, size = bool(block & 1), block >> 1 & 0x03, block >> 3
        if kind == _RESERVED:
            raise FrameError("a block of the reserved type")
        _skip(stream, 1 if kind == _RLE else size)
    if descriptor & 0x04:  # Content_Checksum_flag
        _skip(stream, 4)


def _read(stream: IO[bytes], count: int) -> bytes:
    data = stream.read(count)
    if len(data) < count:
        raise FrameError(TRUNCATED)
    return data


def _skip(stream: IO[bytes], count: int) -> None:
    """Jump `count` bytes, which must all be there."""
    if count:
        stream.seek(count - 1, io.SEEK_CUR)
        if not stream.read(1):
            raise FrameError(TRUNCATED)


def _int(data: bytes) -> int:
    return int.from_bytes(data, "little")
