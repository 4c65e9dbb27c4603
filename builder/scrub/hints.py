"""Which rules may match a text, from the hints (`Rule.hints`) found in it.

Every match of a hinted rule contains one of its hints, so a rule none of whose hints is in
the text need not run. Asking `hint in text` rule by rule cost more than the regexes on short
texts (83 rules, ~90 distinct hints) and ~40% of the scrub on long ones: here the hints of
two or more characters are found in one Aho-Corasick pass over the text (pyahocorasick, in
C), and the one-character ones (`:`, `.`, `@`) with `str.__contains__` (a memchr).
"""

from __future__ import annotations

from collections.abc import Sequence

import ahocorasick

from builder.scrub.rule import Rule


class HintIndex:
    """The rules (by index) each hint admits, and a search for the hints of a text."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        by_hint: dict[str, list[int]] = {}
        for index, rule in enumerate(rules):
            for hint in rule.hints:
                by_hint.setdefault(hint, []).append(index)
        self.unhinted = tuple(i for i, rule in enumerate(rules) if not rule.hints)
        self.by_hint = {hint: tuple(found) for hint, found in by_hint.items()}
        self._single = tuple((h, r) for h, r in self.by_hint.items() if len(h) == 1)
        self._automaton: ahocorasick.Automaton | None = None
        longer = [(h, r) for h, r in self.by_hint.items() if len(h) > 1]
        if longer:
            self._automaton = ahocorasick.Automaton()
            for hint, found in longer:
                self._automaton.add_word(hint, found)
            self._automaton.make_automaton()

    def candidates(self, lower: str) -> list[int]:
        """Indexes, in rule order, of the rules with no hints or with a hint in `lower` (the
        lowercased text: hints are lowercase)."""
        found = set(self.unhinted)
        for hint, rules in self._single:
            if hint in lower:
                found.update(rules)
        if self._automaton is not None:
            for _, rules in self._automaton.iter(lower):
                found.update(rules)
        return sorted(found)
