"""Observation text helpers shared by steps, teacher and replay."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f]")


def number_lines(text: str) -> str:
    """Prefix each line with `N> ` (1-based), the form the compressor reads."""
    return "\n".join(f"{i}> {line}" for i, line in enumerate(text.split("\n"), start=1))


def looks_binary(text: str) -> bool:
    """True for text that is mostly control bytes (a dumped binary file, not a log)."""
    if not text:
        return False
    sample = text[:4096]
    if "\x00" in sample:
        return True
    return len(_CONTROL.findall(sample)) / len(sample) > 0.1
