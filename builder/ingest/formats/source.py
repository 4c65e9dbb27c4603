"""The `Source` an adapter reads from: one input file (or a dataset name), with its text and
parsed document read once and shared by every adapter that sniffs it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from builder.errors import InputError
from builder.ingest.file_reading import logical_suffix, open_stream, parse_json

JSON_SUFFIXES = (".json", ".traj")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Source:
    """One input: a file on disk (JSON or JSONL) or a dataset reference (Hub id, folder, Parquet).

    Parsing is lazy and cached so that detection and loading share one parse of a JSON file.
    """

    path: Path
    options: dict[str, Any] = field(default_factory=dict)  # e.g. column mapping for datasets
    _text: str | None = field(default=None, repr=False)
    _document: Any = field(default=None, repr=False)
    _parsed: bool = field(default=False, repr=False)

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def is_file(self) -> bool:
        return self.path.is_file()

    @property
    def is_jsonl(self) -> bool:
        suffix = logical_suffix(self.path)
        if suffix in JSONL_SUFFIXES:
            return True
        if suffix in JSON_SUFFIXES or not self.is_file:
            return False
        head = self.head().lstrip()
        return head.startswith("{") and "\n{" in head and not head.startswith("[")

    def open(self) -> IO[bytes]:
        """The file's bytes, decompressed (gzip, zstd) and capped (`ingest.file_reading`)."""
        return open_stream(self.path)

    def head(self, size: int = 65536) -> str:
        """The first bytes of the file as text (for sniffing without a full parse)."""
        with self.open() as fh:
            return fh.read(size).decode("utf-8", errors="replace")

    def text(self) -> str:
        """The whole file as UTF-8 text; non-UTF-8 bytes are an input error."""
        if self._text is None:
            with self.open() as fh:
                data = fh.read()
            try:
                self._text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{self.path}: not UTF-8 text (byte {exc.start}: {exc.reason})",
                    kind="encoding",
                ) from exc
            del data  # the bytes and the text must not both outlive the decode
        return self._text

    def document(self) -> Any:
        """The file parsed as one JSON value (cached); the text is dropped once parsed."""
        if not self._parsed:
            text = self.text()
            if not text.strip():
                raise InputError(f"{self.path}: empty file", kind="empty")
            self._text = None
            self._document = parse_json(text, str(self.path))
            self._parsed = True
        return self._document

    def release(self) -> None:
        """Drop the cached document: once its record is built, a huge file is held only by the
        record (see `FormatAdapter.load`), so ingest can free it before writing steps."""
        self._text = self._document = None
        self._parsed = False

    def lines(self) -> Iterator[tuple[int, Any]]:
        """(line index, parsed value or InputError) for each non-blank JSONL line, streaming."""
        with self.open() as fh:
            for index, raw in enumerate(fh):
                if not raw.strip():
                    continue
                where = f"{self.path} line {index + 1}"
                try:
                    yield index, parse_json(raw.decode("utf-8"), where)
                except UnicodeDecodeError as exc:
                    yield index, InputError(f"{where}: not UTF-8 ({exc.reason})", kind="encoding")
                except InputError as exc:
                    yield index, exc

    def json_document(self) -> Any:
        """The whole-file JSON value for detection: None for JSONL, non-JSON or unreadable."""
        try:
            if not self.is_file or self.is_jsonl:
                return None
            if not self.head(256).lstrip().startswith(("{", "[")):
                return None
            return self.document()
        except (InputError, OSError):
            return None

    def first_value(self) -> Any:
        """`sample()` for detection: None when the source cannot be read or parsed."""
        try:
            return self.sample()
        except (InputError, OSError):
            return None

    def sample(self) -> Any:
        """The first JSON value of the source: the whole document, or the first good JSONL line."""
        if self.is_jsonl:
            for _, value in self.lines():
                if not isinstance(value, InputError):
                    return value
            return None
        return self.document()
