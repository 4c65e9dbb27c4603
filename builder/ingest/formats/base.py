"""The adapter protocol every trajectory format implements (it reads a `formats.source.Source`).

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
from typing import Any, Protocol, runtime_checkable

from builder.errors import InputError
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.steps import Action
from schemas.trajectories import Message, TrajectoryRecord

LoadResult = TrajectoryRecord | QuarantineRecord


@runtime_checkable
class FormatAdapter(Protocol):
    """What every format module provides (as a module-level `ADAPTER` instance)."""

    name: str  # the value users pass to --format
    harness: str  # the agent harness that writes it
    text_replies: bool  # every assistant turn is answered by a user message (text grammars)
    persistent_shell: bool  # one shell kept across turns: a `cd` moves later commands

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

    def with_payload(self, message: Message, payload: str) -> str:
        """The observation's content with `payload` in place of its own, envelope as logged."""
        ...

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """True when the harness refused this turn as a format error (its actions never ran)."""
        ...


class BaseAdapter:
    """Defaults shared by adapters: whole content is the payload; tool calls are the actions.

    `text_replies`: the harness answers every assistant turn with a user message, even one
    without an action (text-grammar harnesses); tool-call harnesses leave it False.
    `persistent_shell`: the harness runs every command in one shell kept across turns, so a
    `cd` moves later commands (SWE-agent, OpenHands); False where each command gets a fresh
    subshell (mini-swe-agent) or the shell is reset to the project (Claude Code).
    """

    name = "base"
    harness = "unknown"
    text_replies = False
    persistent_shell = False

    def rejected(self, message: Message, actions: Sequence[Action]) -> bool:
        """Text harnesses reject a turn without an action; tool-call harnesses reject none."""
        return self.text_replies and not actions

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return "", message.content, ""

    def with_payload(self, message: Message, payload: str) -> str:
        """Prefix + payload + suffix; an adapter whose envelope is not a plain concatenation
        (a JSON object around the output) re-encodes instead."""
        prefix, _, suffix = self.split_observation(message)
        return prefix + payload + suffix

    def parse_action(self, message: Message) -> list[Action]:
        return [tool_call_action(c.name, c.arguments) for c in message.tool_calls]


SHELL_TOOLS = frozenset(
    {"bash", "execute_bash", "Bash", "shell", "terminal", "run", "TerminalAction", "run_shell"}
    | {"bash_command"}  # ATIF (Harbor) converters
)


def is_shell(action: Action) -> bool:
    """Whether an action is a shell line (its `command`, or a shell tool's arguments)."""
    return action.command is not None or action.tool in SHELL_TOOLS


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


# the tool name of a turn of several calls that are not all shell commands
TURN_TOOL = "tool_calls"


def combine_turn(actions: Sequence[Action]) -> Action | None:
    """One action for a whole turn: several shell calls become one command joined with
    ` && ` (as the harness runs them, one after another); several calls of other tools
    become a `tool_calls` action whose arguments list every call in order. NAP compares
    whole turns with whole turns, the agent's reply and the logged next turn alike."""
    if not actions:
        return None
    if len(actions) == 1:
        return actions[0]
    raw = "\n".join(a.raw for a in actions)
    if all(a.command is not None for a in actions):
        return shell_action(" && ".join(a.command or "" for a in actions), raw, actions[0].tool)
    calls = [{"tool": a.tool, "arguments": _arguments(a.arguments)} for a in actions]
    return Action(tool=TURN_TOOL, arguments=canonical_json({"calls": calls}), command=None, raw=raw)


def turn_calls(action: Action) -> list[Action]:
    """The calls of a `tool_calls` turn (`combine_turn`), or the action itself."""
    if action.tool != TURN_TOOL:
        return [action]
    calls = _arguments(action.arguments).get("calls")
    if not isinstance(calls, list):
        return [action]
    return [
        tool_call_action(str(c.get("tool", "")), c.get("arguments") or {})
        for c in calls
        if isinstance(c, dict)
    ]


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


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


def bump(counts: dict[str, int], key: str, n: int = 1) -> None:
    """Count `n` more of `key` (the per-trajectory tallies adapters keep in metadata)."""
    counts[key] = counts.get(key, 0) + n


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
