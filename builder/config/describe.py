"""Every config key with its value, source, type, default and meaning, read from the models.

`nap-builder config` prints it for a resolved config, and the README's key table is generated
from the same rows (`keys_markdown`), so the descriptions written once on the pydantic fields
are what users see everywhere.
"""

from __future__ import annotations

import json
import textwrap
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from builder.config.overrides import split_key
from builder.config.pipeline import HASH_EXCLUDED, PipelineConfig

Source = Literal["file", "--set", "default"]


@dataclass(frozen=True)
class KeyRow:
    key: str  # dotted; list items as `inputs[].path`
    type: str
    default: str
    description: str
    in_hash: bool  # changing it changes the output (and restarts a resumed run's NAP tables)
    value: Any = None
    source: Source = "default"


def key_rows(
    cfg: PipelineConfig | None = None,
    raw: Mapping[str, Any] | None = None,
    overrides: Sequence[str] = (),
) -> list[KeyRow]:
    """One row per leaf key. With `cfg`, each row carries its resolved value and its source:
    `--set` when an override names it (or a parent), `file` when the YAML `raw` holds it."""
    overridden = [tuple(split_key(o.partition("=")[0].strip())) for o in overrides]
    data = cfg.model_dump(mode="json") if cfg is not None else {}
    rows = []
    for path, info in _leaves(PipelineConfig, ()):
        key = ".".join(path)
        value = _lookup(data, path) if cfg is not None else None
        source: Source = "default"
        if any(path[: len(o)] == o for o in overridden):
            source = "--set"
        elif raw is not None and _present(raw, path):
            source = "file"
        rows.append(
            KeyRow(
                key=key,
                type=type_name(info.annotation),
                default=_default(info),
                description=" ".join((info.description or "").split()),
                in_hash=not _excluded(path),
                value=value,
                source=source,
            )
        )
    return rows


def _leaves(
    model: type[BaseModel], prefix: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        inner = _unwrap(info.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            yield from _leaves(inner, path)
        elif get_origin(inner) is list and _is_model(get_args(inner)[0]):
            yield from _leaves(get_args(inner)[0], (*prefix, f"{name}[]"))
        else:
            yield path, info


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _unwrap(annotation: Any) -> Any:
    """`X | None` -> X (a section that may be null, like `compressor`)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def type_name(annotation: Any) -> str:
    """A readable type: `int`, `float | None`, `sampled | logged`, `list[str]`."""
    origin = get_origin(annotation)
    if origin is Literal:
        return " | ".join(str(a) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in get_args(annotation))
    if origin in (list, tuple, dict):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in get_args(annotation))}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _default(info: Any) -> str:
    if info.default_factory is not None:
        value = info.default_factory()
    elif info.default is PydanticUndefined:
        return "(required)"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return show(value)


def show(value: Any) -> str:
    """A value as one short line (YAML-like: null, true, plain strings)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value, ensure_ascii=False).replace('"', "")


def _lookup(data: Any, path: tuple[str, ...]) -> Any:
    node = data
    for part in path:
        if part.endswith("[]"):
            node = node.get(part[:-2]) if isinstance(node, dict) else None
            return [_lookup(item, path[len(path) - 1 :]) for item in node or []]
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _present(raw: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = raw
    for part in path:
        name = part[:-2] if part.endswith("[]") else part
        if not isinstance(node, Mapping) or name not in node:
            return False
        node = node[name]
        if part.endswith("[]"):
            return True
    return True


def _excluded(path: tuple[str, ...]) -> bool:
    dotted = ".".join(path)
    return any(dotted == e or dotted.startswith(e + ".") for e in HASH_EXCLUDED)


def keys_text(rows: Sequence[KeyRow], prefix: str | None = None, *, values: bool = True) -> str:
    """The `nap-builder config` listing: a block per key (without `values`, the defaults)."""
    shown = [r for r in rows if prefix is None or r.key.startswith(prefix)]
    lines = []
    for row in shown:
        hashed = "" if row.in_hash else ", not in the config hash"
        value = show(row.value) if values else row.default
        lines.append(f"{row.key} = {value}    ({row.source}{hashed})")
        lines.append(f"    {row.type}; default {row.default}")
        if row.description:
            lines += textwrap.wrap(
                row.description, 100, initial_indent="    ", subsequent_indent="    "
            )
    lines.append(f"{len(shown)} keys" + (f" starting with {prefix!r}" if prefix else ""))
    return "\n".join(lines)


def keys_markdown(rows: Sequence[KeyRow]) -> str:
    """The README's table of every key."""
    lines = ["| key | type | default | hash | meaning |", "|---|---|---|---|---|"]
    for row in rows:
        cells = [f"`{row.key}`", row.type, f"`{row.default}`", "yes" if row.in_hash else "no"]
        cells.append(row.description)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
