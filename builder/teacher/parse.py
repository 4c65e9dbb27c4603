"""Read a teacher reply as exactly one compressor output.

Tolerant of what models wrap around the answer (code fences, prose before or after, a
`<think>` block) but strict about the answer itself: one JSON object of a known kind, with
content of the right shape. Anything else is a `ParseError` whose reason is stored with the
candidate, so bad replies are counted instead of silently dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from builder.teacher.output import KINDS, CompressorOutput, OmittedRange, ParseError

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_RANGE = re.compile(r"^\s*(\d+)\s*(?:[-–—]\s*(\d+))?\s*(?::\s*(.*?))?\s*$", re.DOTALL)
_DECODER = json.JSONDecoder(strict=False)  # models put raw newlines inside strings


def parse_output(text: str | None) -> CompressorOutput | ParseError:
    """The compressor output in `text`, or why there is none."""
    if text is None or not text.strip():
        return ParseError("empty_reply")
    found = _single_object(_THINK.sub("", text))
    if isinstance(found, ParseError):
        return found
    return _from_object(found)


def parse_range(spec: str) -> OmittedRange | None:
    """`"N-M: summary"` or `"N: summary"` (summary optional) as a range; None if malformed."""
    match = _RANGE.match(spec)
    if match is None:
        return None
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) is not None else start
    return OmittedRange(start, end, (match.group(3) or "").strip())


def _single_object(text: str) -> dict[str, Any] | ParseError:
    if "{" not in text:
        return ParseError("no_json", "no '{' in the reply")
    first = _next_object(text, 0)
    if first is None:
        return ParseError("invalid_json", "no decodable JSON object in the reply")
    obj, end = first
    if _next_object(text, end) is not None:
        return ParseError("multiple_json", "more than one JSON object in the reply")
    return obj


def _next_object(text: str, start: int) -> tuple[dict[str, Any], int] | None:
    """The first JSON object that decodes at or after `start`, with the index after it."""
    pos = text.find("{", start)
    while pos != -1:
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            return obj, end
        pos = text.find("{", pos + 1)
    return None


def _from_object(obj: dict[str, Any]) -> CompressorOutput | ParseError:
    kind = obj.get("type")
    if kind not in KINDS:
        return ParseError("bad_type", f"type must be one of {list(KINDS)}, got {kind!r}")
    content = obj.get("content")
    if kind == "unchanged":
        return CompressorOutput("unchanged")
    if kind == "plain":
        if not isinstance(content, str):
            return ParseError("bad_content", "plain content must be a string")
        return CompressorOutput("plain", text=content.strip())
    if not isinstance(content, list) or not all(isinstance(c, str) for c in content):
        return ParseError("bad_content", "code content must be a list of range strings")
    ranges = []
    for spec in content:
        parsed = parse_range(spec)
        if parsed is None:
            return ParseError("bad_range_syntax", f"not 'N-M: summary': {spec[:80]!r}")
        ranges.append(parsed)
    return CompressorOutput("code", ranges=tuple(ranges))
