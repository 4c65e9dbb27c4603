"""The zstd frame walk (builder.ingest.zstd_frames) on files written by the zstandard library: whole
files end at a frame boundary, every cut inside a frame is caught, and garbage is refused."""

from __future__ import annotations

import io

import pytest
import zstandard

from builder.ingest.zstd_frames import FrameError, check_frames
from tests.paths import SHARED

SMITH = SHARED / "swe-smith-messages/ft_xml_example.jsonl"


def skippable(payload: bytes) -> bytes:
    """A skippable frame (magic 0x184D2A5?, then the payload's size): metadata some tools add."""
    return (0x184D2A53).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def frames() -> list[bytes]:
    text = SMITH.read_bytes()
    streamed = zstandard.ZstdCompressor().compressobj()  # no content size in its header
    return [
        zstandard.ZstdCompressor(level=3).compress(text),
        zstandard.ZstdCompressor(level=19, write_checksum=True).compress(text[:5000]),
        streamed.compress(text[:20_000]) + streamed.flush(),
        skippable(b"made by a test"),
        zstandard.ZstdCompressor().compress(b""),
        zstandard.ZstdCompressor().compress(b"\0" * 200_000),  # RLE blocks
    ]


def test_whole_files_are_counted_frame_by_frame_and_every_cut_inside_one_is_caught() -> None:
    parts = frames()
    data = b"".join(parts)
    assert check_frames(io.BytesIO(data)) == len(parts)
    boundaries = {sum(len(p) for p in parts[:k]) for k in range(len(parts) + 1)}
    for cut in range(len(data)):
        if cut in boundaries:
            assert check_frames(io.BytesIO(data[:cut])) == sorted(boundaries).index(cut)
        else:
            with pytest.raises(FrameError, match="ends inside a frame"):
                check_frames(io.BytesIO(data[:cut]))


def test_what_is_not_a_frame_is_refused_with_its_offset() -> None:
    whole = frames()[0]
    with pytest.raises(FrameError, match=f"no zstd frame at byte {len(whole)}"):
        check_frames(io.BytesIO(whole + b"trailing text"))
    reserved = bytearray(whole)
    reserved[4] |= 0x08  # the frame header's reserved bit
    with pytest.raises(FrameError, match="reserved bit"):
        check_frames(io.BytesIO(bytes(reserved)))
