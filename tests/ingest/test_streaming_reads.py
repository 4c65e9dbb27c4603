"""Streaming reads with lowered caps: large documents built incrementally, arrays element by
element, long lines skipped unread, archives bounded, byte-order marks, names as safe text."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from builder.errors import InputError
from builder.ingest import archives, json_stream
from builder.ingest.file_reading import open_stream
from builder.ingest.formats import source as source_module
from builder.ingest.formats.source import Source
from builder.ingest.names import display_name, safe_text
from tests.paths import SHARED

SWE = sorted((SHARED / "swe-agent").glob("*.traj"))


def _opener(path: Path):
    return lambda: open_stream(path)


def test_a_large_document_is_built_incrementally_and_equals_the_stdlib_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "STREAM_BYTES", 1000)  # every real file is "large"
    for path in SWE:
        got = json_stream.read_document(_opener(path), path.name)
        assert got == json.loads(path.read_text())


def test_a_value_past_the_cap_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"messages": ["x" * 3_000_000]}))
    ((_, error),) = list(json_stream._incremental(_opener(path), "big.json", 200_000, 0))
    assert error.kind == "record_too_large" and "200,000 bytes" in str(error)


def test_array_elements_come_one_at_a_time_and_a_bad_one_ends_the_file(tmp_path: Path) -> None:
    path = tmp_path / "array.json"
    docs = [json.loads(p.read_text()) for p in SWE]
    path.write_text(json.dumps(docs)[:-1] + ', {"x": "\\ud800"}, [1, 2')
    got = list(json_stream.array_items(_opener(path), "array.json"))
    assert [i for i, _ in got] == [0, 1, 2, 3]
    assert got[0][1] == docs[0] and got[1][1] == docs[1]
    assert got[2][1] == {"x": "?"}  # yajl writes a lone surrogate escape as `?`: storable
    assert got[3][1].kind == "invalid_json" and "element 3" in str(got[3][1])


def test_depth_is_counted_before_the_parser_can_grow_with_it(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)  # ijson's own builder takes GBs here
    ((_, error),) = list(json_stream.array_items(_opener(path), "deep.json"))
    assert error.kind == "nesting_too_deep"


def test_a_line_past_the_cap_is_skipped_unread_and_the_next_lines_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source_module, "MAX_RECORD_BYTES", 100_000)
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n' + '{"b": "' + "y" * 500_000 + '\n{"c": 3}\n{"d": \x00}\n')
    got = list(Source(path).lines())
    assert [i for i, _ in got] == [0, 1, 2, 3]
    assert got[0][1] == {"a": 1} and got[2][1] == {"c": 3}
    assert got[1][1].kind == "record_too_large" and "line 2" in str(got[1][1])
    assert got[3][1].kind == "invalid_json" and "line 4" in str(got[3][1])


def test_byte_order_marks_are_dropped_and_utf16_is_read_as_utf8(tmp_path: Path) -> None:
    text = SWE[0].read_text()
    for name, data in {
        "bom8.json": b"\xef\xbb\xbf" + text.encode(),
        "le.json": text.encode("utf-16"),
        "be.json": b"\xfe\xff" + text.encode("utf-16-be"),
        "utf32.json": text.encode("utf-32"),
    }.items():
        (tmp_path / name).write_bytes(data)
        assert Source(tmp_path / name).document() == json.loads(text), name


def test_a_real_zip_bomb_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_ARCHIVE_BYTES", 1_000_000)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros.jsonl", b"\0" * 5_000_000)  # 5 MB in about 5 KB
    assert path.stat().st_size < 20_000
    with archives.unpacked(path, "zip", "bomb.zip") as members:
        with pytest.raises(InputError) as caught:
            list(members)
        assert caught.value.kind == "archive_too_large" and "zip bomb" in str(caught.value)


def test_member_paths_never_leave_the_unpack_folder(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../../escape.jsonl", "{}\n")
        archive.writestr("/abs/x.jsonl", "{}\n")
    (tmp_path / "evil.zip").write_bytes(buffer.getvalue())
    with archives.unpacked(tmp_path / "evil.zip", "zip", "evil.zip") as members:
        written = [m.path for m in members]
        assert all(p is not None and p.is_file() and ".." not in p.parts for p in written)
        assert all(any(d.name.startswith("nap-unpack-") for d in p.parents) for p in written if p)
    assert not (tmp_path / "escape.jsonl").exists() and not Path("/abs/x.jsonl").exists()


def test_names_with_undecodable_bytes_and_control_characters_render_as_escapes() -> None:
    raw = Path(b"/in/caf\xe9\nx.json".decode("utf-8", "surrogateescape"))
    assert display_name(raw) == "/in/caf\\xe9\\nx.json"
    assert safe_text("plain é name.json") == "plain é name.json"
    assert safe_text("\ud800") == "\\ud800"


def test_a_tar_zst_archive_is_read_member_by_member(tmp_path: Path) -> None:
    import tarfile

    import zstandard

    from builder.ingest.units import units

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in SWE:
            archive.add(path, f"runs/{path.name}")
    (tmp_path / "runs.tar.zst").write_bytes(zstandard.ZstdCompressor().compress(buffer.getvalue()))
    rows: list[object] = []
    names = [
        (source.name, source.document() == json.loads(path.read_text()))
        for (source, _), path in zip(
            units([(Source(tmp_path / "runs.tar.zst"), None)], rows.append, lambda *_: None),
            SWE,
            strict=True,
        )
    ]
    assert names == [(f"{tmp_path}/runs.tar.zst!runs/{p.name}", True) for p in SWE]
    assert rows == []
