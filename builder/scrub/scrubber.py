"""The Scrubber: finds secrets in text with the rules and walks the records that carry text.

Every string that leaves the machine (a model request, a published table) passes through
`Scrubber.scrub`; the record helpers cover each text field of trajectories and steps, and
`scrub_value` any nested row. Counts per kind feed report.json and the dataset card.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from builder.scrub import (
    auth_context,
    context,
    families,
    keys,
    keywords,
    token_formats,
    vendor_formats,
)
from builder.scrub.hints import HintIndex
from builder.scrub.rule import PLACEHOLDER, Rule, follows_word, not_secret
from schemas.steps import Action, StepRecord
from schemas.trajectories import Message, TrajectoryRecord

EMAIL_RULE = Rule(
    "email",
    hints=("@",),
    regex=re.compile(
        r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9._%+\-\\]))[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"
    ),
)

# Token formats first, then key blocks, context rules last: on overlapping matches the
# earlier rule wins, so a key in `OPENAI_API_KEY=sk-...` counts as `openai_key`.
DEFAULT_RULES: tuple[Rule, ...] = (
    *token_formats.library_rules(),
    *token_formats.own_rules(),
    *vendor_formats.rules(),
    *keys.RULES,
    *context.rules(),
    *auth_context.rules(),
    *keywords.rules(),
    *families.rules(),
)


# Characters of text a Scrubber remembers answers for (about 2x that in memory with the
# scrubbed copies; texts are shared with the records that hold them).
MEMO_CHARS = 8_000_000


class Scrubber:
    """Redacts credentials (and, if asked, emails) and counts redactions per kind.

    `scrub` may be called from several threads: the counter and memo updates are locked.
    For process pools, give each worker its own Scrubber and `merge` the counts. Texts seen
    before are answered from a memo of at most MEMO_CHARS characters (`forget` drops it).
    """

    def __init__(self, emails: bool = False, rules: Iterable[Rule] = DEFAULT_RULES) -> None:
        self.rules: tuple[Rule, ...] = (*rules, EMAIL_RULE) if emails else tuple(rules)
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        # For the rare text whose lowercase form has another length (some non-ASCII letters).
        self._ignorecase = {
            r.regex.pattern: re.compile(r.regex.pattern, r.regex.flags | re.IGNORECASE)
            for r in self.rules
            if r.lower
        }
        self._hints = HintIndex(self.rules)
        self._memo: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._memo_chars = 0

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, kind) spans to redact, in text order."""
        found: list[tuple[int, int, int, str]] = []
        lower = text.lower()
        same_length = len(lower) == len(text)
        anchored: dict[str, list[int]] = {}  # anchor pattern -> where it matched
        for priority in self._hints.candidates(lower):
            rule = self.rules[priority]
            regex, subject = rule.regex, text
            if rule.lower:
                regex = rule.regex if same_length else self._ignorecase[rule.regex.pattern]
                subject = lower if same_length else text
            matches: Iterable[re.Match[str]]
            if rule.starts is not None:
                tried = (regex.match(subject, p) for p in sorted(set(rule.starts(subject))))
                matches = (m for m in tried if m is not None)
            elif rule.anchor is not None and subject is lower:
                if rule.anchor.pattern not in anchored:
                    anchored[rule.anchor.pattern] = [m.start() for m in rule.anchor.finditer(lower)]
                tried = (regex.match(lower, p) for p in anchored[rule.anchor.pattern])
                matches = (m for m in tried if m is not None)
            else:
                matches = regex.finditer(subject)
            for m in matches:
                if rule.bounded and follows_word(text, m.start()):
                    continue
                start, end = rule.span(m)
                value = text[start:end]
                if not value or (rule.check is not None and not rule.check(value)):
                    continue
                if not_secret(value):
                    continue
                if rule.vet is not None and not rule.vet(subject, m, value):
                    continue
                found.append((start, end, priority, rule.kind))
        found.sort(key=lambda s: (s[2], s[0]))
        chosen: list[tuple[int, int, str]] = []
        for start, end, _, kind in found:
            if all(end <= s or start >= e for s, e, _ in chosen):
                chosen.append((start, end, kind))
        return sorted(chosen)

    def scrub(self, text: str) -> str:
        """`text` with every detected secret replaced by `[REDACTED:<kind>]`.

        A text seen before is answered from a bounded memo (a step's observation and action
        are also in its trajectory's messages); its redactions are counted again, so the
        counts are per occurrence either way."""
        if not text:
            return text
        known = self._memo.get(text)
        if known is not None:
            scrubbed, kinds = known
        else:
            scrubbed, kinds = self._redact(text)
            self._remember(text, scrubbed, kinds)
        if kinds:
            self._count(kinds)
        return scrubbed

    def _redact(self, text: str) -> tuple[str, tuple[str, ...]]:
        """(scrubbed text, kinds redacted in text order)."""
        spans = self.find(text)
        if not spans:
            return text, ()
        parts: list[str] = []
        pos = 0
        for start, end, kind in spans:
            parts += [text[pos:start], PLACEHOLDER.format(kind=kind)]
            pos = end
        parts.append(text[pos:])
        return "".join(parts), tuple(kind for _, _, kind in spans)

    def _remember(self, text: str, scrubbed: str, kinds: tuple[str, ...]) -> None:
        """Keep the answer; past MEMO_CHARS of remembered text the memo starts over, so a
        long-lived Scrubber (publishing a whole corpus) holds a bounded amount."""
        if len(text) > MEMO_CHARS:
            return
        with self._lock:
            if self._memo_chars + len(text) > MEMO_CHARS:
                self._memo.clear()
                self._memo_chars = 0
            self._memo[text] = (scrubbed, kinds)
            self._memo_chars += len(text)

    def scrub_optional(self, text: str | None) -> str | None:
        return None if text is None else self.scrub(text)

    def scrub_value(self, value: Any) -> Any:
        """Scrub every string inside nested lists / dicts (Arrow rows, JSON objects)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.scrub_value(v) for k, v in value.items()}
        return value

    def scrub_message(self, message: Message) -> Message:
        """A copy of `message` with content, content parts and tool-call arguments scrubbed."""
        calls = [
            dataclasses.replace(c, arguments=self.scrub(c.arguments)) for c in message.tool_calls
        ]
        return dataclasses.replace(
            message,
            content=self.scrub(message.content),
            content_parts=self.scrub_optional(message.content_parts),
            tool_calls=calls,
            raw_output=self.scrub_optional(message.raw_output),
        )

    def scrub_trajectory(self, record: TrajectoryRecord) -> TrajectoryRecord:
        """A copy with task, system prompt, metadata and every message scrubbed (ids kept)."""
        return dataclasses.replace(
            record,
            task=self.scrub_optional(record.task),
            system_prompt=self.scrub_optional(record.system_prompt),
            messages=[self.scrub_message(m) for m in record.messages],
            metadata=self.scrub(record.metadata),
        )

    def scrub_action(self, action: Action | None) -> Action | None:
        if action is None:
            return None
        return dataclasses.replace(
            action,
            arguments=self.scrub(action.arguments),
            command=self.scrub_optional(action.command),
            raw=self.scrub(action.raw),
        )

    def scrub_step(self, step: StepRecord) -> StepRecord:
        """A copy with the actions, thought, observations and focus question scrubbed."""
        return dataclasses.replace(
            step,
            action=self.scrub_action(step.action),
            next_action=self.scrub_action(step.next_action),
            thought=self.scrub_optional(step.thought),
            observation=self.scrub(step.observation),
            focus_question=self.scrub_optional(step.focus_question),
            deployed_observation=self.scrub_optional(step.deployed_observation),
        )

    def forget(self) -> None:
        """Drop the memo (the counts stay): for a Scrubber kept only for its counts."""
        with self._lock:
            self._memo.clear()
            self._memo_chars = 0

    def merge(self, counts: Mapping[str, int]) -> None:
        """Add counts from another Scrubber (e.g. one per worker process)."""
        self._count_items(counts.items())

    def _count(self, kinds: Iterable[str]) -> None:
        self._count_items((k, 1) for k in kinds)

    def _count_items(self, items: Iterable[tuple[str, int]]) -> None:
        with self._lock:
            for kind, n in items:
                self.counts[kind] = self.counts.get(kind, 0) + n


def scrub_message(message: Message, scrubber: Scrubber | None = None) -> Message:
    """Module-level convenience for callers that do not keep counts."""
    return (scrubber or Scrubber()).scrub_message(message)
