"""The user cache folder: assembled model files, built wheels, tokenizer tables, mirrors of
object-store runs. `NAP_BUILDER_CACHE` overrides ~/.cache/nap-builder."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "NAP_BUILDER_CACHE"


def user_cache_root() -> Path:
    root = os.environ.get(CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "nap-builder"
