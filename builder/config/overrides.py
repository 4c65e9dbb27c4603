"""`--set dotted.key=value` overrides, checked against the config models before they apply."""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

import yaml
from pydantic import BaseModel

from builder.config.error_text import _unwrap_optional
from builder.config.pipeline import PipelineConfig
from builder.errors import ConfigError

_KEY_PART = re.compile(r'"([^"]*)"|([^."]+)')


def apply_override(raw: dict[str, Any], override: str) -> None:
    """Set `dotted.key=value` in `raw`; the key must exist in the config models."""
    key, sep, text = override.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {override!r}: expected dotted.key=value, e.g. gate.threshold=0.7")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {key}: value is not valid YAML ({exc})") from None
    parts = split_key(key)
    _check_key(parts)
    node: Any = raw
    for depth, part in enumerate(parts[:-1]):
        node = _descend(node, part, parts[: depth + 1])
    last = parts[-1]
    if isinstance(node, list):
        node[_list_index(node, last, parts)] = value
    else:
        node[last] = value


def split_key(key: str) -> list[str]:
    """`a.b.c` -> [a, b, c]; quote a part holding dots: `prices."gpt-4.1".input`."""
    parts, pos = [], 0
    while True:
        match = _KEY_PART.match(key, pos)
        if match is None:
            raise ConfigError(f"--set {key!r}: malformed key near position {pos}")
        parts.append(match.group(1) if match.group(1) is not None else match.group(2))
        pos = match.end()
        if pos == len(key):
            return parts
        if key[pos] != ".":
            raise ConfigError(f"--set {key!r}: expected '.' at position {pos}")
        pos += 1


# --- override keys -----------------------------------------------------------------------


def _check_key(parts: list[str]) -> None:
    """Walk the model types along `parts`, failing on the first unknown key."""
    annotation: Any = PipelineConfig
    for depth, part in enumerate(parts):
        annotation = _unwrap_optional(annotation)
        where = ".".join(parts[:depth]) or "the top level"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = annotation.model_fields
            if part not in fields:
                raise ConfigError(
                    f"unknown config key {'.'.join(parts[: depth + 1])!r}; "
                    f"valid keys at {where}: {', '.join(sorted(fields))}"
                )
            annotation = fields[part].annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        elif get_origin(annotation) is list:
            if not part.isdigit():
                raise ConfigError(f"{where} is a list: use an index, e.g. {where}.0, not {part!r}")
            annotation = get_args(annotation)[0]
        else:
            raise ConfigError(f"{where} is a plain value and has no key {part!r}")


def _descend(node: Any, part: str, parts: list[str]) -> Any:
    if isinstance(node, list):
        return node[_list_index(node, part, parts)]
    if not isinstance(node, dict):
        raise ConfigError(f"--set {'.'.join(parts)}: {'.'.join(parts[:-1])} is not a mapping")
    child = node.get(part)
    if child is None:
        child = node[part] = {}
    return child


def _list_index(node: list[Any], part: str, parts: list[str]) -> int:
    index = int(part)
    if index >= len(node):
        raise ConfigError(
            f"--set {'.'.join(parts)}: index {index} out of range ({len(node)} items)"
        )
    return index
