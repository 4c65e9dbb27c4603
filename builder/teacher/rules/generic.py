"""Rules that read only the shape of the text: head+tail, repeated lines, long lines, unchanged.

They apply to any command, which makes them the baselines every other candidate is compared
with; the command-aware families live in their own modules.
"""

from __future__ import annotations

import re

from builder.teacher.output import UNCHANGED, CompressorOutput
from builder.teacher.render import line_count
from builder.teacher.rules.base import Span, fold
from schemas.steps import Action

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def head_tail(
    raw: str, action: Action | None = None, *, head: int = 10, tail: int = 20
) -> CompressorOutput | None:
    """Keep the first `head` and last `tail` lines (errors and summaries sit at the end).
    Not applicable when fewer than two lines would go (a placeholder is a line too)."""
    start, end = head + 1, line_count(raw) - tail
    if end - start + 1 < 2:
        return None
    return fold(raw, [Span(start, end, "middle of the output")])


def dedupe_repeated_lines(
    raw: str, action: Action | None = None, *, min_run: int = 3
) -> CompressorOutput | None:
    """Keep the first line of each run of `min_run`+ near-identical lines (same text up to
    numbers and spacing: progress bars, retries, download logs) and omit the rest of the run.
    Not applicable when no run saves characters."""
    lines = raw.split("\n")
    keys = [_SPACE.sub(" ", _DIGITS.sub("0", line)).strip() for line in lines]
    spans: list[Span] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and keys[j + 1] == keys[i]:
            j += 1
        if j - i + 1 >= min_run:
            same = all(line == lines[i] for line in lines[i + 1 : j + 1])
            summary = "same as the line above" if same else "like the line above, other numbers"
            spans.append(Span(i + 2, j + 1, summary))
        i = j + 1
    return fold(raw, spans)


def mask_long_lines(
    raw: str, action: Action | None = None, *, max_chars: int = 400, preview: int = 60
) -> CompressorOutput | None:
    """Omit lines longer than `max_chars` (minified code, base64, data dumps), keeping a preview
    of how each masked run starts; consecutive long lines become one range.
    Not applicable when no line is that long."""
    lines = raw.split("\n")
    spans: list[Span] = []
    i = 0
    while i < len(lines):
        if len(lines[i]) <= max_chars:
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and len(lines[j + 1]) > max_chars:
            j += 1
        chars = sum(len(line) for line in lines[i : j + 1])
        start = lines[i][:preview].strip()
        spans.append(Span(i + 1, j + 1, f"{chars} characters starting: {start}"))
        i = j + 1
    return fold(raw, spans)


def unchanged(raw: str, action: Action | None = None) -> CompressorOutput:
    """The raw output itself: a baseline candidate that always passes the length check."""
    return UNCHANGED
