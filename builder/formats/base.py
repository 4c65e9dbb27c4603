"""The adapter protocol every trajectory format implements, and the `Source` it reads from.

An adapter turns one source (a file, or a dataset) into canonical `TrajectoryRecord`s, streaming
record by record, and knows its harness's action grammar (`parse_action`) and observation
envelope (`split_observation`). Bad records come back as `QuarantineRecord`s, never exceptions,
so one broken line does not stop a file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from builder.errors import InputError
from builder.inputs import logical_suffix, open_stream, parse_json
from schemas.quarantine import QuarantineRecord
from schemas.steps import Action
from schemas.trajectories import Message, TrajectoryRecord

LoadResult = TrajectoryRecord | QuarantineRecord

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
        """The file's bytes, decompressed (gzip, zstd) and capped (`builder.inputs`)."""
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


@runtime_checkable
class FormatAdapter(Protocol):
    """What every format module provides (as a module-level `ADAPTER` instance)."""

    name: str  # the value users pass to --format
    harness: str  # the agent harness that writes it
    text_replies: bool  # every assistant turn is answered by a user message (text grammars)

    def detect(self, source: Source) -> bool:
        """True when the source is in this format (may parse it; the parse is cached)."""
        ...

    def load(self, source: Source) -> Iterator[LoadResult]:
        """Canonical trajectories, one at a time; broken records become quarantine rows.

        Whole-document adapters build the record, release the source, and only then yield,
        holding no parsed value across the `yield` (memory on huge single observations)."""
        ...

    def parse_action(self, message: Message) -> list[Action]:
        """The actions of one assistant message in this harness's grammar ([] when none)."""
        ...

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        """(prefix, payload, suffix) of an observation; only the payload is ever compressed."""
        ...

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """True when the harness refused this turn as a format error (its actions never ran)."""
        ...


class BaseAdapter:
    """Defaults shared by adapters: whole content is the payload; tool calls are the actions.

    `text_replies`: the harness answers every assistant turn with a user message, even one
    without an action (text-grammar harnesses); tool-call harnesses leave it False.
    """

    name = "base"
    harness = "unknown"
    text_replies = False

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """Text harnesses reject a turn without an action; tool-call harnesses reject none."""
        return self.text_replies and not actions

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return "", message.content, ""

    def parse_action(self, message: Message) -> list[Action]:
        return [tool_call_action(c.name, c.arguments) for c in message.tool_calls]


SHELL_TOOLS = frozenset(
    {"bash", "execute_bash", "Bash", "shell", "terminal", "run", "TerminalAction", "run_shell"}
    | {"bash_command"}  # ATIF (Harbor) converters
)


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON: the canonical text of tool arguments and metadata."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def tool_call_action(name: str, arguments: str | dict[str, Any], raw: str | None = None) -> Action:
    """An Action from a tool call; the shell command is lifted out when the tool is a shell."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = {"_raw": arguments}
    else:
        parsed = arguments
    if not isinstance(parsed, dict):
        parsed = {"_value": parsed}
    command = parsed.get("command") if name in SHELL_TOOLS else None
    return Action(
        tool=name,
        arguments=canonical_json(parsed),
        command=command if isinstance(command, str) else None,
        raw=raw if raw is not None else canonical_json({"name": name, "arguments": parsed}),
    )


def shell_action(command: str, raw: str, tool: str = "bash") -> Action:
    """An Action for a shell command written as text (fenced block, XML call, flat log)."""
    return Action(
        tool=tool, arguments=canonical_json({"command": command}), command=command, raw=raw
    )


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def as_float(value: Any) -> float | None:
    """A cost or similar from a log: a finite number, else None (never raises)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def as_count(value: Any) -> int | None:
    """A token or call count from a log: an int (or integral float) that fits int64, else None."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if INT64_MIN <= value <= INT64_MAX else None


def hand_over(box: list[LoadResult]) -> Iterator[LoadResult]:
    """Yield the records of `box`, emptying it: no suspended frame keeps one alive, so the
    consumer can free a huge record as soon as it is done with it."""
    while box:
        yield box.pop(0)


def hash_text(digest: Any, text: str, chunk: int = 1 << 20) -> None:
    """Feed `text` as UTF-8 to `digest` in slices: a 200 MB message is never encoded at once."""
    for start in range(0, len(text), chunk):
        digest.update(text[start : start + chunk].encode("utf-8", errors="surrogatepass"))


def trajectory_id(source_format: str, native_id: str | None, messages: Sequence[Message]) -> str:
    """Stable content hash: the same run read twice (or from two paths) gets the same id."""
    digest = hashlib.sha256()
    digest.update(source_format.encode())
    digest.update(b"\0")
    digest.update((native_id or "").encode())
    for m in messages:
        digest.update(b"\0")
        digest.update(m.role.encode())
        digest.update(b"\1")
        hash_text(digest, m.content)
        for c in m.tool_calls:
            hash_text(digest, f"\2{c.id}\3{c.name}\3{c.arguments}")
    return digest.hexdigest()[:20]


def content_text(content: Any) -> tuple[str, str | None]:
    """(text, parts JSON) of an OpenAI/Anthropic content value: a string or a list of parts.

    Text parts are joined with newlines; the original list is kept as JSON so that replay can
    send exactly what the model saw.
    """
    if content is None:
        return "", None
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts), canonical_json(content)
    return str(content), canonical_json(content)


def quarantine(
    source: Source, index: int | None, fmt: str | None, error: InputError
) -> QuarantineRecord:
    """A quarantine row for an input error."""
    return QuarantineRecord(
        source_path=source.name,
        record_index=index,
        source_format=fmt,
        error_kind=error.kind,
        message=str(error),
    )
