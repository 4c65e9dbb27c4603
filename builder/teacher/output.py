"""The compressor output record (`unchanged` / `plain` / `code`) and its canonical JSON text.

The canonical JSON is what the `candidates.output` and `supervision.target` columns hold, so two
replies that mean the same thing are stored (and trained on) as the same text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

Kind = Literal["unchanged", "plain", "code"]
KINDS: tuple[Kind, ...] = ("unchanged", "plain", "code")


@dataclass(frozen=True, slots=True)
class OmittedRange:
    """Lines `start`..`end` (1-based, inclusive) of the raw output, replaced by `summary`."""

    start: int
    end: int
    summary: str

    @property
    def size(self) -> int:
        return self.end - self.start + 1

    def spec(self) -> str:
        """The range string as the compressor writes it: `N-M: summary` or `N: summary`."""
        where = str(self.start) if self.start == self.end else f"{self.start}-{self.end}"
        return f"{where}: {self.summary}"


@dataclass(frozen=True, slots=True)
class CompressorOutput:
    """One parsed compressor answer. `text` is set for `plain`, `ranges` for `code`."""

    kind: Kind
    text: str = ""
    ranges: tuple[OmittedRange, ...] = ()

    def to_json(self) -> str:
        """Canonical JSON text: `{"type": ...}` then `"content"` when the kind has one."""
        obj: dict[str, object] = {"type": self.kind}
        if self.kind == "plain":
            obj["content"] = self.text
        elif self.kind == "code":
            obj["content"] = [r.spec() for r in self.ranges]
        return json.dumps(obj, ensure_ascii=False)


UNCHANGED = CompressorOutput("unchanged")


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why a reply could not be read as a compressor output; `reason` goes to `invalid_reason`."""

    reason: str
    detail: str = ""
