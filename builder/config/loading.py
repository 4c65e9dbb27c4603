"""Reading a pipeline YAML, applying overrides, validating, hashing and dumping it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from builder.config.error_text import _describe, _kind
from builder.config.overrides import apply_override
from builder.config.pipeline import HASH_EXCLUDED, PipelineConfig
from builder.config.uris import local_path
from builder.errors import ConfigError
from builder.ingest.hub_inputs import split_ref
from builder.llm.endpoint_kinds import endpoint_identity

_GLOB_CHARS = frozenset("*?[")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> PipelineConfig:
    """Read a YAML config, apply `dotted.key=value` overrides (values parsed as YAML), validate."""
    path = Path(path)
    raw = read_yaml(path)
    _resolve_paths(raw, path.resolve().parent)
    for override in overrides:
        apply_override(raw, override)
    _resolve_paths(raw, Path.cwd())
    return validate_config(raw, source=str(path))


def validate_config(raw: dict[str, Any], *, source: str = "config") -> PipelineConfig:
    """Validate a raw mapping, turning pydantic errors into one readable `ConfigError`."""
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [_describe(error) for error in exc.errors()]
        raise ConfigError(f"{source}: invalid config\n  " + "\n  ".join(lines)) from None


def config_hash(cfg: PipelineConfig) -> str:
    """12 hex digits of sha256 over the canonical JSON of every key that changes the output."""
    canonical = json.dumps(
        hashed_keys(cfg), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def hashed_keys(cfg: PipelineConfig) -> dict[str, Any]:
    """The config as the hash sees it: what changes the output, nothing else."""
    data = cfg.model_dump(mode="json")
    if cfg.exclude_instances.empty:  # unset: the hash of configs written before the key existed
        data.pop("exclude_instances", None)
    if cfg.replay.is_default:  # the offline round: the hash of configs written before the key
        data.pop("replay", None)
    elif cfg.replay.prefix_compressor == "endpoint" and cfg.compressor is not None:
        data["replay"]["endpoint"] = _endpoint_identity(data["compressor"])
    for dotted in HASH_EXCLUDED:
        *parents, last = dotted.split(".")
        node = data
        for part in parents:
            node = node[part]
        node.pop(last, None)
    for role in ("teacher", "agent"):  # a local server restarted on another port: same run
        if role in data and "base_url" in data[role]:
            url = data[role]["base_url"]
            url = url[0] if isinstance(url, list) else url  # replicas: one endpoint
            data[role]["base_url"] = endpoint_identity(url) or None
    return data


ENDPOINT_OUTPUT_KEYS = (
    "provider", "model", "temperature", "max_tokens", "structured", "reasoning_effort",
    "reasoning_tokens",
)  # fmt: skip


def _endpoint_identity(block: dict[str, Any]) -> dict[str, Any]:
    """What makes a compressor endpoint's answers what they are (not its key or transport):
    a prefix-compressed run hashes it, though `eval`'s `compressor:` block is left out."""
    found = {k: block.get(k) for k in ENDPOINT_OUTPUT_KEYS}
    url = block.get("base_url")
    url = url[0] if isinstance(url, list) else url
    found["base_url"] = endpoint_identity(url) or None
    return found


def dump_resolved(cfg: PipelineConfig) -> str:
    """The fully resolved config (defaults filled in, paths absolute) as YAML."""
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


# --- reading and paths -------------------------------------------------------------------


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config ({exc.strerror})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {_kind(raw)}")
    return raw


def _resolve_paths(raw: dict[str, Any], base: Path) -> None:
    """Make relative paths absolute against `base`; already absolute ones are left alone."""
    inputs = raw.get("inputs")
    if isinstance(inputs, list):
        for i, item in enumerate(inputs):
            key = f"inputs[{i}]"
            if isinstance(item, str):
                inputs[i] = resolve_input_path(local_path(item, key, others=True), base)
            elif isinstance(item, dict) and isinstance(item.get("path"), str):
                item["path"] = resolve_input_path(local_path(item["path"], key, others=True), base)
            elif isinstance(item, dict) and isinstance(item.get("hf_dataset"), str):
                ref, split = split_ref(item["hf_dataset"])
                ref = resolve_input_path(local_path(ref, key, others=True), base)
                item["hf_dataset"] = f"{ref}:{split}" if split else ref
    _resolve_exclude_files(raw, base)
    for section, name in (("output", "dir"), ("output", "local_dir"), ("cache", "dir")):
        node = raw.get(section)
        if isinstance(node, dict) and isinstance(node.get(name), str):
            key = f"{section}.{name}"
            text = local_path(node[name], key, stores=key == "output.dir")
            node[name] = text if "://" in text else str(_absolute(text, base))


def _resolve_exclude_files(raw: dict[str, Any], base: Path) -> None:
    """Files of `exclude_instances` (the shorthand string or `files:`) made absolute; a named
    set is left alone."""
    from builder.ingest.instances import NAMED_SETS

    node = raw.get("exclude_instances")
    if isinstance(node, str) and node not in NAMED_SETS and "://" not in node:
        raw["exclude_instances"] = str(_absolute(node, base))
    elif isinstance(node, dict) and isinstance(node.get("files"), list):
        node["files"] = [
            str(_absolute(f, base)) if isinstance(f, str) and "://" not in f else f
            for f in node["files"]
        ]


def resolve_input_path(text: str, base: Path) -> str:
    """An input path made absolute against `base`, unless it is a URL or a Hub id."""
    if "://" in text:
        return text
    candidate = _absolute(text, base)
    expanded = Path(text).expanduser()
    if expanded.is_absolute() or candidate.exists() or _GLOB_CHARS & set(text):
        return str(candidate)
    if text.startswith(".") or not _HUB_ID.fullmatch(text):
        return str(candidate)
    return text  # `owner/name` that is not a local path: a Hub dataset id


def _absolute(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else (base / path).resolve()
