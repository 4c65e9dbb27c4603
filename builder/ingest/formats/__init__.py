"""Format adapters and auto-detection.

Each module in this package defines `ADAPTER`, an object following `FormatAdapter`. The order
of `_MODULES` is the detection order: more specific formats come first.

Reads: one `Source` (a file or a dataset). Writes: nothing (canonical trajectory records).
Entry point: `builder.ingest.formats.detect`.
"""

from __future__ import annotations

import importlib
import logging
from functools import cache

from builder.errors import InputError, UnknownFormatError
from builder.ingest.formats.base import FormatAdapter
from builder.ingest.formats.source import Source

log = logging.getLogger(__name__)

_MODULES = (
    "builder.ingest.formats.cline",  # before mini-swe-agent: both read bare message lists
    "builder.ingest.formats.mini_swe_agent",
    "builder.ingest.formats.swe_agent",
    "builder.ingest.formats.openhands_v0",
    "builder.ingest.formats.openhands_v1",
    "builder.ingest.formats.openhands_llm_log",
    "builder.ingest.formats.claude_code",
    "builder.ingest.formats.atif",
    "builder.ingest.formats.codex_cli",
    "builder.ingest.formats.gemini_cli",
    "builder.ingest.formats.adp",
    "builder.ingest.formats.chat_messages",
    "builder.ingest.formats.hf_dataset",
)


@cache
def adapters() -> tuple[FormatAdapter, ...]:
    """Every available adapter, in detection order."""
    found = []
    for module_name in _MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # not written yet
            raise
        found.append(module.ADAPTER)
    return tuple(found)


def format_names() -> list[str]:
    return [a.name for a in adapters()]


def get_adapter(name: str) -> FormatAdapter:
    """The adapter called `name`; an unknown name lists the valid ones."""
    for adapter in adapters():
        if adapter.name == name:
            return adapter
    raise UnknownFormatError(
        f"unknown format {name!r}; supported formats: {', '.join(format_names())}"
    )


def detect(source: Source) -> FormatAdapter:
    """The first adapter that recognises the source, or an error saying how to force one.

    A detector that raises (a hostile file can trip any sniffing code) counts as "not this
    format": detection must never stop an ingest.
    """
    for adapter in adapters():
        try:
            if adapter.detect(source):
                return adapter
        except InputError:
            continue
        except Exception:  # a detector bug: log it and try the next format
            log.exception("%s: detection by %s failed", source.name, adapter.name)
    raise UnknownFormatError(
        f"{source.name}: format not recognised; supported formats: {', '.join(format_names())}. "
        "Force one with --format NAME (or `format:` in the pipeline config)."
    )
