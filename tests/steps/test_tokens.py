"""cl100k counts: the bounded memo answers repeated texts with the tokenizer's own count."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from tiktoken.load import load_tiktoken_bpe

import builder.steps.tokens as tokens
from builder.steps.tokens import MEMO_ENTRIES, cl100k, count_tokens
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


@pytest.fixture
def fresh_tokenizer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty user cache and no tokenizer loaded yet in this process."""
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(tmp_path / "cache"))
    cl100k.cache_clear()
    yield tmp_path / "cache"
    cl100k.cache_clear()


def parsed_file_ranks() -> dict[bytes, int]:
    path = files("tiktoken_ext").joinpath("data").joinpath("cl100k_base.tiktoken")
    return load_tiktoken_bpe(str(path), expected_hash=tokens.CL100K_SHA256)


def test_ranks_are_cached_and_read_back_equal(fresh_tokenizer: Path) -> None:
    text = real_texts()[0]
    first = cl100k().encode_ordinary(text)
    cached = tokens.ranks_cache_path()
    assert cached.is_relative_to(fresh_tokenizer) and cached.stat().st_size > 1_000_000
    cl100k.cache_clear()
    stamp = cached.stat().st_mtime_ns
    assert cl100k().encode_ordinary(text) == first
    assert cached.stat().st_mtime_ns == stamp  # read, not rewritten
    assert tokens.cl100k_ranks() == parsed_file_ranks()


def test_damaged_copy_is_ignored_and_rebuilt(fresh_tokenizer: Path) -> None:
    cl100k()
    cached = tokens.ranks_cache_path()
    data = bytearray(cached.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: the hash no longer matches
    cached.write_bytes(bytes(data))
    assert tokens.cl100k_ranks() == parsed_file_ranks()
    assert cached.read_bytes() != bytes(data)  # rewritten whole
    cached.write_bytes(b"short")
    assert tokens.cl100k_ranks() == parsed_file_ranks()


def test_unwritable_cache_still_counts(
    fresh_tokenizer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = fresh_tokenizer.parent / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NAP_BUILDER_CACHE", str(blocker))
    assert count_tokens("hello world") == 2
    assert not tokens.ranks_cache_path().exists()
