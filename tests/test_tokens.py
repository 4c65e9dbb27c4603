"""cl100k counts: the bounded memo answers repeated texts with the tokenizer's own count."""

from __future__ import annotations

import pytest

import builder.tokens as tokens
from builder.tokens import MEMO_ENTRIES, cl100k, count_tokens
from tests.paths import SHARED


def real_texts() -> list[str]:
    files = sorted(p for p in SHARED.rglob("*") if p.is_file())[:6]
    return [p.read_text(errors="replace")[:5000] for p in files]


def test_counts_are_the_tokenizers_first_and_repeated() -> None:
    texts = real_texts()
    expected = [len(cl100k().encode_ordinary(t)) for t in texts]
    assert all(n > 100 for n in expected)
    assert [count_tokens(t) for t in texts] == expected
    assert [count_tokens(t) for t in reversed(texts)] == expected[::-1]


def test_long_texts_are_counted_and_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "MEMO_CHARS", 1000)
    text = real_texts()[0]
    assert len(text) > 1000
    before = tokens._remembered.cache_info().currsize
    assert count_tokens(text) == len(cl100k().encode_ordinary(text))
    assert tokens._remembered.cache_info().currsize == before


def test_memo_is_bounded() -> None:
    for k in range(MEMO_ENTRIES + 50):
        assert count_tokens(f"text number {k} ") == len(
            cl100k().encode_ordinary(f"text number {k} ")
        )
    assert tokens._remembered.cache_info().currsize <= MEMO_ENTRIES
