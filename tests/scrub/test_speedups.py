"""The Scrubber's shortcuts change no answer: the hint index admits the rules the per-rule
hint test admitted, and the memo of seen texts gives the same text and per-occurrence counts."""

from __future__ import annotations

import pytest

import builder.scrub.scrubber as scrubber_module
from builder.scrub import Scrubber
from tests.paths import SAMPLES, SHARED
from tests.scrub.corpus import LOOKALIKES, SEEDED


def texts() -> list[str]:
    """The seeded corpus, the look-alikes and the real sample files (cut in pieces)."""
    real = [p.read_text(errors="replace") for root in (SHARED, SAMPLES) for p in root.rglob("*")
            if p.is_file()]  # fmt: skip
    pieces = [text[k : k + 3000] for text in real for k in range(0, len(text), 3000)]
    return [t.format(v=v) for _, v, t in SEEDED] + LOOKALIKES + pieces


def per_rule_test(scrubber: Scrubber, lower: str) -> list[int]:
    """The rules a per-rule hint test admits: no hints, or one of its hints in the text."""
    return [
        i
        for i, rule in enumerate(scrubber.rules)
        if not rule.hints or any(hint in lower for hint in rule.hints)
    ]


@pytest.mark.parametrize("emails", [False, True])
def test_hint_index_admits_the_same_rules(emails: bool) -> None:
    scrubber = Scrubber(emails=emails)
    corpus = texts()
    admitted = 0
    for text in corpus:
        lower = text.lower()
        found = scrubber._hints.candidates(lower)
        assert found == per_rule_test(scrubber, lower)
        admitted += len(found)
    assert len(scrubber._hints.unhinted) < admitted / len(corpus) < len(scrubber.rules)


def test_repeated_texts_give_the_same_text_and_count_each_time() -> None:
    corpus = [t.format(v=v) for _, v, t in SEEDED] + LOOKALIKES
    once = Scrubber()
    expected = [once.scrub(t) for t in corpus]
    twice = Scrubber()
    assert [twice.scrub(t) for t in corpus + corpus] == expected + expected
    assert twice.counts == {kind: 2 * n for kind, n in once.counts.items()}
    assert sum(once.counts.values()) >= len(SEEDED)


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = [t.format(v=v) for _, v, t in SEEDED] + LOOKALIKES
    expected = [Scrubber().scrub(t) for t in corpus]
    monkeypatch.setattr(scrubber_module, "MEMO_CHARS", 500)
    scrubber = Scrubber()
    for _ in range(3):
        assert [scrubber.scrub(t) for t in corpus] == expected
        assert sum(map(len, scrubber._memo)) <= 500
    scrubber.forget()
    assert not scrubber._memo and scrubber.counts


def test_no_rules_no_hints() -> None:
    assert Scrubber(rules=()).scrub("password = 'hunter22' sk-" + "a1" * 20) == (
        "password = 'hunter22' sk-" + "a1" * 20
    )
