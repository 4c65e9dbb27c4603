"""The `Source` an adapter reads from: one input file (or a dataset name, an archive member or
one element of a JSON array of trajectories), with its parsed document read once and shared
by every adapter that sniffs it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from builder.errors import InputError
from builder.ingest.file_reading import logical_suffix, open_stream, parse_json
from builder.ingest.json_stream import MAX_RECORD_BYTES, read_document
from builder.ingest.names import display_name

JSON_SUFFIXES = (".json", ".traj")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Source:
    """One input: a file on disk (JSON or JSONL) or a dataset reference (Hub id, folder, Parquet).

    Parsing is lazy and cached so that detection and loading share one parse of a JSON file
    (and one failure: a refused file is not read again by every adapter that sniffs it).
    `label` names what the path cannot (`archive.zip!run/x.traj.json`); `element` is the index
    of a value taken from a JSON array of trajectories (`builder.ingest.array_files`).
    """

    path: Path
    options: dict[str, Any] = field(default_factory=dict)  # e.g. column mapping for datasets
    label: str | None = None
    element: int | None = None
    _document: Any = field(default=None, repr=False)
    _parsed: bool = field(default=False, repr=False)
    _error: InputError | None = field(default=None, repr=False)

    @classmethod
    def of_value(cls, parent: Source, index: int, value: Any) -> Source:
        """One element of `parent`'s top-level array, as a source of its own."""
        return cls(parent.path, parent.options, parent.label, index, _document=value, _parsed=True)

    @property
    def name(self) -> str:
        """The name stored and printed: safe text whatever bytes the file name holds."""
        return self.label if self.label is not None else display_name(self.path)

    @property
    def is_file(self) -> bool:
        return self.path.is_file()

    @property
    def is_jsonl(self) -> bool:
        if self.element is not None:
            return False
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

    def document(self) -> Any:
        """The file parsed as one JSON value (cached, and so is a failure): at once when
        small, incrementally and capped when large (`builder.ingest.json_stream`)."""
        if not self._parsed:
            if self._error is not None:
                raise self._error
            try:
                self._document = read_document(self.open, self.name)
            except InputError as exc:
                self._error = exc
                raise
            self._parsed = True
        return self._document

    def release(self) -> None:
        """Drop the cached document: once its record is built, a huge file is held only by the
        record (see `FormatAdapter.load`), so ingest can free it before writing steps."""
        self._document = None
        self._parsed = False

    def lines(self) -> Iterator[tuple[int, Any]]:
        """(line index, parsed value or InputError) for each non-blank JSONL line, streaming;
        a line longer than `MAX_RECORD_BYTES` is skipped unread (it is never held whole)."""
        with self.open() as fh:
            for index in itertools.count():
                raw = fh.readline(MAX_RECORD_BYTES + 1)
                if not raw:
                    return
                where = f"{self.name} line {index + 1}"
                if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                    del raw
                    while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                        pass
                    yield (
                        index,
                        InputError(
                            f"{where}: longer than {MAX_RECORD_BYTES:,} bytes: refused "
                            "(one trajectory is read whole)",
                            kind="record_too_large",
                        ),
                    )
                    continue
                if not raw.strip():
                    continue
                try:
                    yield index, parse_json(raw.decode("utf-8"), where)
                except UnicodeDecodeError as exc:
                    yield index, InputError(f"{where}: not UTF-8 ({exc.reason})", kind="encoding")
                except InputError as exc:
                    yield index, exc

    def json_document(self) -> Any:
        """The whole-file JSON value for detection: None for JSONL, non-JSON or unreadable."""
        if self._parsed:
            return self._document
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
