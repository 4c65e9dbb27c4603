"""Check a compressor output against its raw text and render what the agent would see.

Rendering follows the reference method: `unchanged` is the raw text; `plain` is a marker line
then the summary; `code` is a marker line then the raw lines with every omitted range replaced
by one `(compressed K lines: summary)` line. The marker counts toward the length limit, so a
valid compression is never longer (in characters) than the raw text.
"""

from __future__ import annotations

from builder.teacher.output import CompressorOutput

PLAIN_MARKER = "[output compressed: summary of the original output]"
CODE_MARKER = "[output compressed: omitted lines are summarised in parentheses]"

# Reasons stored in `candidates.invalid_reason` (parse reasons are in `parse.py`).
EMPTY_CONTENT = "empty_content"
BAD_RANGE = "bad_range"  # start after end
RANGE_OUT_OF_BOUNDS = "range_out_of_bounds"
UNSORTED_RANGES = "unsorted_ranges"
OVERLAPPING_RANGES = "overlapping_ranges"
TOO_LONG = "too_long"


def line_count(raw_text: str) -> int:
    """Lines as `number_lines` numbers them (a trailing newline makes a last empty line)."""
    return raw_text.count("\n") + 1


def placeholder(size: int, summary: str) -> str:
    """The line that stands for `size` omitted lines."""
    return f"(compressed {size} lines: {summary})" if summary else f"(compressed {size} lines)"


def structural_reason(output: CompressorOutput, raw_text: str) -> str | None:
    """Why `output` cannot be rendered against `raw_text` at all, or None."""
    if output.kind == "plain" and not output.text.strip():
        return EMPTY_CONTENT
    if output.kind != "code":
        return None
    if not output.ranges:
        return EMPTY_CONTENT
    lines = line_count(raw_text)
    for r in output.ranges:
        if r.start > r.end:
            return BAD_RANGE
        if r.start < 1 or r.end > lines:
            return RANGE_OUT_OF_BOUNDS
    for prev, cur in zip(output.ranges, output.ranges[1:], strict=False):
        if cur.start < prev.start:
            return UNSORTED_RANGES
        if cur.start <= prev.end:
            return OVERLAPPING_RANGES
    return None


def render(output: CompressorOutput, raw_text: str) -> str:
    """The text the agent sees in place of `raw_text`; raises ValueError if not renderable."""
    reason = structural_reason(output, raw_text)
    if reason is not None:
        raise ValueError(f"cannot render a {output.kind} output: {reason}")
    if output.kind == "unchanged":
        return raw_text
    if output.kind == "plain":
        return f"{PLAIN_MARKER}\n{output.text}"
    lines = raw_text.split("\n")
    out = [CODE_MARKER]
    kept_from = 1
    for r in output.ranges:
        out.extend(lines[kept_from - 1 : r.start - 1])
        out.append(placeholder(r.size, r.summary))
        kept_from = r.end + 1
    out.extend(lines[kept_from - 1 :])
    return "\n".join(out)


def render_checked(output: CompressorOutput, raw_text: str) -> tuple[str | None, str | None]:
    """(rendered, reason): rendered is None only when the output cannot be rendered at all;
    reason is None when the output is valid (rendered and not longer than the raw text)."""
    reason = structural_reason(output, raw_text)
    if reason is not None:
        return None, reason
    rendered = render(output, raw_text)
    return rendered, (TOO_LONG if len(rendered) > len(raw_text) else None)


def validate(output: CompressorOutput, raw_text: str) -> str | None:
    """Why `output` is not a valid compression of `raw_text`, or None when it is."""
    return render_checked(output, raw_text)[1]
