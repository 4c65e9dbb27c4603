"""Randomness tests from detect-secrets' entropy plugins, tuned to spare digests and ids.

detect-secrets flags any quoted string whose Shannon entropy passes a limit (4.5 for base64,
3.0 for hex). On agent trajectories that redacts git SHAs, lockfile checksums, docker digests
and UUIDs, which the compressor must see verbatim. So entropy is only asked about values in a
credential context (a name like `client_secret`), the limit scales with the value's length (a
20-character random string cannot reach 4.5 bits), and values shaped like digests or ids are
never called random.
"""

from __future__ import annotations

import math
import re

from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)

# The plugin defaults are 4.5 and 3.0 bits per character; at 20 characters a random base64
# string averages ~3.9 bits and a random hex one ~3.4, so the limit is the smaller of the
# plugin default and `SCALE * log2(len)` (log2(len) is the most a string of that length has).
BASE64 = Base64HighEntropyString(limit=4.5)
HEX = HexHighEntropyString(limit=3.0)
SCALE = 0.82
MIN_LENGTH = 20

_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_DIGEST = re.compile(
    r"(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{56}|[0-9a-fA-F]{64}|[0-9a-fA-F]{96}"
    r"|[0-9a-fA-F]{128})"  # md5, sha1 (git), sha224, sha256, sha384, sha512
    r"|(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b|h1)[-:=][A-Za-z0-9+/=_\-]+"  # sri, go.sum
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # uuid
)


def digest_like(value: str) -> bool:
    """A content hash, an integrity string or a UUID: high entropy, never a credential."""
    return _DIGEST.fullmatch(value) is not None


def entropy(value: str) -> float:
    """Bits per character, by the hex plugin for hex strings and the base64 plugin otherwise."""
    plugin = HEX if set(value) <= _HEX_CHARS else BASE64
    return plugin.calculate_shannon_entropy(value)


def limit(value: str) -> float:
    plugin = HEX if set(value) <= _HEX_CHARS else BASE64
    return min(plugin.entropy_limit, SCALE * math.log2(max(len(value), 2)))


def looks_random(value: str) -> bool:
    """A long value whose entropy passes the tuned limit and which is not a digest or id."""
    if len(value) < MIN_LENGTH or digest_like(value):
        return False
    return entropy(value) > limit(value)
