"""Readable one-line messages for pydantic errors; values of secret-looking keys are withheld."""

from __future__ import annotations

import re
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from builder.config.pipeline import PipelineConfig

_SECRET_KEY = re.compile(r"api_?key|secret|passw|(^|_)token$", re.IGNORECASE)


# --- error messages ----------------------------------------------------------------------


def _describe(error: Any) -> str:
    """One line per pydantic error: the dotted key, the value got, and what is allowed."""
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc) or "config"
    if error["type"] == "extra_forbidden":
        parent = ".".join(loc[:-1]) or "the top level"
        valid = ", ".join(sorted(_model_at(loc[:-1]).model_fields))
        return f"unknown key {key!r}; valid keys at {parent}: {valid}"
    if error["type"] == "missing":
        return f"{key}: required key is missing"
    got = _shown(loc, error.get("input"))
    if error["type"] == "literal_error":
        allowed = ", ".join(repr(v) for v in _literal_values(loc))
        return f"{key}: got {got}; allowed values: {allowed}"
    message = error["msg"].removeprefix("Value error, ")
    return f"{key}: {message} (got {got})" if loc else message


def _shown(loc: list[str], value: Any) -> str:
    """The offending value for a message; anything that might be a secret is withheld."""
    if any(_SECRET_KEY.search(part) for part in loc):
        return "<withheld>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _annotation_at(loc: list[str]) -> Any:
    annotation: Any = PipelineConfig
    for part in loc:
        annotation = _unwrap_optional(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if part not in annotation.model_fields:
                return None
            annotation = annotation.model_fields[part].annotation
        elif get_origin(annotation) in (dict, list):
            annotation = get_args(annotation)[-1]
        else:
            return None
    return _unwrap_optional(annotation)


def _model_at(loc: list[str]) -> type[BaseModel]:
    annotation = _annotation_at(loc)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return PipelineConfig


def _literal_values(loc: list[str]) -> tuple[Any, ...]:
    annotation = _annotation_at(loc)
    return get_args(annotation) if get_origin(annotation) is Literal else ()


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _kind(value: Any) -> str:
    return type(value).__name__
