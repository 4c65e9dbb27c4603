"""The run's inputs as the card lists them: path or Hub id, and the licence when it is known.

A licence is known when the publish config names it (`publish.input_licenses`, keyed by the
input path or Hub id as written), when a local input folder is itself a Hugging Face dataset
whose README declares `license:`, when a Hub input's README is in the local Hugging Face cache
(ingest fetched it; nothing is downloaded here) and declares one, or when a local input (or the
file's folder) has a LICENSE file whose first lines name a common licence. Anything else is
reported as unknown, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")
LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")
# First-lines markers of common licence texts -> Hub licence ids.
LICENSE_MARKERS = (
    ("mit license", "mit"),
    ("apache license", "apache-2.0"),
    ("bsd 3-clause", "bsd-3-clause"),
    ("bsd 2-clause", "bsd-2-clause"),
    ("gnu general public license", "gpl-3.0"),
    ("creative commons attribution 4.0", "cc-by-4.0"),
)


@dataclass(frozen=True, slots=True)
class InputSource:
    path: str  # as in the resolved config (absolute for local paths) or a Hub id
    license: str | None
    where: str  # how the licence is known: "publish.input_licenses", a file name, or "unknown"


def input_sources(
    resolved_config: Mapping[str, Any], named: Mapping[str, str] | None = None
) -> list[InputSource]:
    """Every input of the run with its licence (named ones first, then detected)."""
    configured = (resolved_config.get("publish") or {}).get("input_licenses") or {}
    named = {**configured, **(named or {})}  # the caller's names win over the run's config
    out = []
    for item in resolved_config.get("inputs") or []:
        path = str(item.get("path") if isinstance(item, Mapping) else item)
        key = _named_key(path, named)
        if key is not None:
            out.append(InputSource(path, named[key], "publish.input_licenses"))
            continue
        if Path(path).exists():
            found = _detect(Path(path))
        else:
            found = _hub_licence(path) if HUB_ID.fullmatch(path) else None
        out.append(InputSource(path, *(found or (None, "unknown"))))
    return out


def _hub_licence(repo_id: str) -> tuple[str, str] | None:
    """The `license:` of a Hub dataset's README when it is in the local cache (no request)."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id, "README.md", repo_type="dataset")
    if not isinstance(cached, str):
        return None
    licence = _readme_licence(Path(cached).read_text(encoding="utf-8", errors="replace"))
    return (licence, "the Hub dataset's README (cached)") if licence else None


def _readme_licence(text: str) -> str | None:
    if not text.startswith("---\n"):
        return None
    try:
        header = yaml.safe_load(text[4:].split("\n---", 1)[0])
    except yaml.YAMLError:
        return None
    licence = header.get("license") if isinstance(header, dict) else None
    if isinstance(licence, list) and licence:
        licence = ", ".join(str(item) for item in licence)
    return licence if isinstance(licence, str) else None


def _named_key(path: str, named: Mapping[str, str]) -> str | None:
    """The key naming this input: equal, or the tail of the resolved path (`builder/samples`)."""
    clean = path.rstrip("/")
    for key in named:
        tail = re.sub(r"^(\.\.?/)+", "", key).rstrip("/")
        if key == path or clean == key.rstrip("/") or (tail and clean.endswith("/" + tail)):
            return key
    return None


def _detect(path: Path) -> tuple[str, str] | None:
    folder = path if path.is_dir() else path.parent
    readme = folder / "README.md"
    if readme.is_file():
        licence = _readme_licence(readme.read_text(encoding="utf-8", errors="replace"))
        if licence:
            return licence, "README.md"
    for name in LICENSE_FILES:
        licence_file = folder / name
        if licence_file.is_file():
            head = licence_file.read_text(encoding="utf-8", errors="replace")[:400].lower()
            for marker, licence in LICENSE_MARKERS:
                if marker in head:
                    return licence, name
    return None
