"""What every rule shares: its signature, the command it sees, and building a checked output.

A rule reads the raw output and the action that produced it, and returns a `CompressorOutput`
or None ("not applicable"). `fold` is the one way rules build `code` outputs: it drops spans
that would not save characters and returns None unless the render is shorter than the raw
text, so no rule can emit an invalid or longer candidate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from builder.similarity.features import action_features
from builder.similarity.records import Features
from builder.teacher.output import CompressorOutput, OmittedRange
from builder.teacher.render import placeholder, render_checked
from schemas.steps import Action

Rule = Callable[[str, Action | None], CompressorOutput | None]

SUMMARY_CHARS = 120


@dataclass(frozen=True, slots=True)
class Span:
    """Lines `start`..`end` (1-based, inclusive) to omit, and what to say instead."""

    start: int
    end: int
    summary: str


def units(action: Action | None) -> tuple[Features, ...]:
    """The units of work of the command that produced the output (none when unknown)."""
    return action_features(action) if action is not None else ()


def fold(raw: str, spans: Iterable[Span]) -> CompressorOutput | None:
    """A `code` output omitting the worthwhile `spans`, or None when it would not be shorter."""
    lines = raw.split("\n")
    ranges: list[OmittedRange] = []
    for span in sorted(spans, key=lambda s: s.start):
        start, end = max(span.start, 1), min(span.end, len(lines))
        if end < start or (ranges and start <= ranges[-1].end):
            continue
        summary = clip(span.summary)
        removed = sum(len(line) + 1 for line in lines[start - 1 : end])
        if removed <= len(placeholder(end - start + 1, summary)) + 1:
            continue
        ranges.append(OmittedRange(start, end, summary))
    if not ranges:
        return None
    output = CompressorOutput("code", ranges=tuple(ranges))
    rendered, reason = render_checked(output, raw)
    if reason is not None or rendered is None or len(rendered) >= len(raw):
        return None
    return output


def runs(flags: list[bool]) -> list[tuple[int, int]]:
    """(start, end) 1-based inclusive line numbers of each run of True in `flags`."""
    out: list[tuple[int, int]] = []
    start = None
    for i, flag in enumerate([*flags, False], 1):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append((start, i - 1))
            start = None
    return out


def clip(text: str, limit: int = SUMMARY_CHARS) -> str:
    """`text` on one line, cut to `limit` characters (summaries must stay short)."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def listed(names: Iterable[str], limit: int = 3) -> str:
    """The first `limit` distinct names, with how many more there are."""
    distinct = list(dict.fromkeys(names))
    shown = ", ".join(distinct[:limit])
    more = len(distinct) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def plural(count: int, noun: str) -> str:
    """`1 match`, `2 matches`, `3 entries`."""
    if count == 1:
        return f"{count} {noun}"
    if noun.endswith("y"):
        return f"{count} {noun[:-1]}ies"
    return f"{count} {noun}es" if noun.endswith(("s", "ch", "sh", "x")) else f"{count} {noun}s"
