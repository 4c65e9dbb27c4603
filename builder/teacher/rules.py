"""Rule-based candidates: cheap compressions that need no model.

Each rule maps a raw output to a `CompressorOutput` (or None when it does not apply) so rule
candidates go through the same validate / render / judge path as teacher samples and can win
selection on their own merit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from builder.teacher.output import UNCHANGED, CompressorOutput, OmittedRange
from builder.teacher.render import line_count, placeholder

Rule = Callable[[str], CompressorOutput | None]

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def head_tail(raw: str, head: int = 10, tail: int = 20) -> CompressorOutput | None:
    """Keep the first `head` and last `tail` lines (errors and summaries sit at the end)."""
    lines = line_count(raw)
    start, end = head + 1, lines - tail
    if end - start + 1 < 2:  # one omitted line is not worth a placeholder line
        return None
    return CompressorOutput("code", ranges=(OmittedRange(start, end, "middle of the output"),))


def dedupe_repeated_lines(raw: str, min_run: int = 3) -> CompressorOutput | None:
    """Keep the first line of each run of near-identical lines (same text up to numbers and
    spacing), omitting the rest of the run when that actually saves characters."""
    lines = raw.split("\n")
    keys = [_SPACE.sub(" ", _DIGITS.sub("0", line)).strip() for line in lines]
    ranges: list[OmittedRange] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and keys[j + 1] == keys[i]:
            j += 1
        if j - i + 1 >= min_run:
            rest = lines[i + 1 : j + 1]
            same = all(line == lines[i] for line in rest)
            summary = "same as the line above" if same else "like the line above, other numbers"
            if sum(len(line) + 1 for line in rest) > len(placeholder(len(rest), summary)) + 1:
                ranges.append(OmittedRange(i + 2, j + 1, summary))
        i = j + 1
    return CompressorOutput("code", ranges=tuple(ranges)) if ranges else None


def mask_long_lines(raw: str, max_chars: int = 400, preview: int = 60) -> CompressorOutput | None:
    """Omit lines longer than `max_chars` (minified code, base64, data dumps), keeping a preview
    of how each masked run starts; consecutive long lines become one range."""
    lines = raw.split("\n")
    ranges: list[OmittedRange] = []
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
        ranges.append(OmittedRange(i + 1, j + 1, f"{chars} characters starting: {start}"))
        i = j + 1
    return CompressorOutput("code", ranges=tuple(ranges)) if ranges else None


def unchanged(raw: str) -> CompressorOutput:
    """The raw output itself: a baseline candidate that always passes the length check."""
    return UNCHANGED


RULES: dict[str, Rule] = {
    "head_tail": head_tail,
    "dedupe_repeated_lines": dedupe_repeated_lines,
    "mask_long_lines": mask_long_lines,
    "unchanged": unchanged,
}
