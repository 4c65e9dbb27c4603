"""Pipeline config: pydantic models of `pipelines/*.yaml`, CLI overrides, hash and dump.

Everything is validated at start-up so that a typo fails before any request is paid for; a
`ConfigError` names the key, the value it got and what is allowed. API keys are never config
values: endpoints name the environment variable that holds the key (`api_key_env`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from builder.errors import ConfigError

Provider = Literal["local", "local-server", "openai", "anthropic"]
LOCAL_MODEL = "gemma-3-270m"  # the embedded GGUF's alias (builder.llm.model_files.MODEL_ALIAS)
HASH_EXCLUDED = (
    "limits",
    "prices",
    "cache",
    "output.dir",
    "output.progress",
    "publish",
    "teacher.api_key_env",
    "agent.api_key_env",
)
"""Keys that do not change any row of the output, so changing them keeps the config hash and a
run can be resumed with, say, more concurrency or a new budget."""

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
_GLOB_CHARS = frozenset("*?[")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_SECRET_KEY = re.compile(r"api_?key|secret|passw|(^|_)token$", re.IGNORECASE)
_KEY_PART = re.compile(r'"([^"]*)"|([^."]+)')


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class InputSpec(_Model):
    """One input: a file, folder, glob or Hugging Face Hub dataset id."""

    path: str = Field(
        description="File, folder, glob or Hub id (`owner/name`). Relative paths in a config file "
        "are resolved against that file's folder, relative paths given with --set against the "
        "working directory; a relative path that does not exist and looks like `owner/name` is "
        "a Hub id (write `./owner/name` to force a local path)."
    )
    format: str = Field(
        default="auto", description="Format adapter name, or `auto` to detect per file."
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Adapter options, e.g. the column mapping of a Hugging Face dataset.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        """`inputs: [data/]` is shorthand for `inputs: [{path: data/}]`."""
        return {"path": value} if isinstance(value, str) else value

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        from builder.formats import format_names  # imports every adapter: only when checking

        names = format_names()
        if value != "auto" and value not in names:
            raise ValueError(
                f"unknown format; allowed values: 'auto', {', '.join(map(repr, names))}"
            )
        return value


class EligibilityConfig(_Model):
    """Which observations are worth compressing (DESIGN.md, "Eligible observations")."""

    min_tokens: int = Field(
        default=256, ge=0, description="Minimum cl100k tokens of the line-numbered observation."
    )
    require_focus: bool = Field(
        default=False, description="Skip steps whose action carries no context-focus question."
    )
    max_observation_chars: int = Field(
        default=1_000_000,
        ge=1,
        description="Larger observations are skipped (too big for any context).",
    )


class EndpointConfig(_Model):
    """A model endpoint; shared by the teacher and the agent."""

    provider: Provider = Field(
        default="local-server",
        description="`local` runs the embedded GGUF in-process, `local-server` starts (or, with "
        "base_url, reuses) a llama.cpp server on 127.0.0.1; `openai` also covers any "
        "OpenAI-compatible server (vLLM, SGLang) through base_url.",
    )
    model: str = Field(
        default=LOCAL_MODEL, min_length=1, description="Model name sent to the endpoint."
    )
    base_url: str | None = Field(
        default=None,
        description="Endpoint URL; null means the provider's default (or the managed server).",
    )
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself); "
        "null means the provider's usual variable (OPENAI_API_KEY, ANTHROPIC_API_KEY).",
    )
    temperature: float = Field(default=1.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=1024, ge=1, description="Maximum new tokens per completion.")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(_ENV_NAME, value):
            raise ValueError(
                "must be the NAME of an environment variable (e.g. OPENAI_API_KEY), never the key"
            )
        return value


class TeacherConfig(EndpointConfig):
    """The compressor teacher that proposes candidate compressions."""

    samples: int = Field(
        default=8, ge=1, description="Teacher samples (K) per eligible observation."
    )
    temperature: float = Field(
        default=1.0,
        ge=0.0,
        le=2.0,
        description="Sampling temperature; high for diverse candidates.",
    )
    rules: list[str] = Field(
        default_factory=list,
        description="Rule-based candidate generators to run besides the teacher, by name.",
    )

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, rules: list[str]) -> list[str]:
        from builder.teacher.rules import RULES  # only when checking a config

        unknown = [name for name in rules if name not in RULES]
        if unknown:
            allowed = ", ".join(repr(name) for name in sorted(RULES))
            raise ValueError(f"unknown rule(s) {unknown}; allowed values: {allowed}")
        return rules


class AgentConfig(EndpointConfig):
    """The agent model whose next action must be preserved."""

    temperature: float = Field(
        default=0.0,
        ge=0.0,
        le=2.0,
        description="Temperature of the candidate action (greedy by default).",
    )
    format_retries: int = Field(
        default=2, ge=0, description="Re-asks when a reply holds no parseable action."
    )


class ReferencesConfig(_Model):
    """What "the agent's next action" is compared against."""

    mode: Literal["sampled", "logged"] = Field(
        default="sampled",
        description="`sampled` re-asks the agent on the raw context; `logged` uses the logged "
        "next action (one reference, no requests).",
    )
    samples: int = Field(
        default=8, ge=1, description="Reference samples per step in `sampled` mode."
    )
    temperature: float = Field(
        default=0.7, ge=0.0, le=2.0, description="Temperature of references."
    )


class GateConfig(_Model):
    """The next-action-preservation gate."""

    similarity: Literal["exact", "normalized", "semantic"] = Field(
        default="semantic",
        description="Action similarity: `exact` (same tool and arguments), `normalized` (equal "
        "after whitespace, quoting, flag order, path prefixes, `cd` prefixes and JSON "
        "canonicalisation) or `semantic` (tree-sitter-bash features, field-wise for editor calls).",
    )
    aggregate: Literal["mean_top_k", "max", "mean"] = Field(
        default="mean_top_k", description="How similarities to the references become one score."
    )
    top_k: int = Field(default=3, ge=1, description="k of `mean_top_k`.")
    threshold: float = Field(
        default=0.65, ge=0.0, le=1.0, description="Pass when aggregate >= this."
    )


class SelectionConfig(_Model):
    """Which passing candidates become supervision."""

    max_per_step: int = Field(
        default=4, ge=1, description="Shortest passing candidates kept per step."
    )
    fallback: Literal["drop", "unchanged"] = Field(
        default="drop",
        description="When no candidate passes: drop the step, or emit an `unchanged` target.",
    )
    exhaustive: bool = Field(
        default=False,
        description="Judge every candidate; by default judging goes shortest-first and stops "
        "after max_per_step passes (same supervision, fewer agent requests).",
    )
    max_preference_pairs: int | None = Field(
        default=4,
        ge=0,
        description="Preference pairs per step (null: every passing x failing pair).",
    )


class LimitsConfig(_Model):
    """Request scheduling and spending limits."""

    concurrency: int = Field(default=8, ge=1, description="Requests in flight at once.")
    steps_in_flight: int | None = Field(
        default=None,
        ge=1,
        description="Steps processed at once (null: as many as keep `concurrency` busy). Set 1 "
        "for a single local model, so the requests of one step run back to back and reuse "
        "its prompt cache instead of evicting each other.",
    )
    requests_per_minute: int | None = Field(
        default=None, ge=1, description="Rate limit (null: none)."
    )
    tokens_per_minute: int | None = Field(
        default=None, ge=1, description="Token rate limit (null: none)."
    )
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        description="Stop scheduling new work once this much is spent (null: none).",
    )
    budget_tokens: int | None = Field(
        default=None, ge=0, description="Same as budget_usd, in prompt + completion tokens."
    )
    timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one request, in seconds.")
    max_retries: int = Field(
        default=5, ge=0, description="Retries of a transient error (429, 5xx)."
    )


class Price(_Model):
    """USD per million tokens."""

    input: float = Field(ge=0, description="Price of a million uncached prompt tokens.")
    cached_input: float | None = Field(
        default=None,
        ge=0,
        description="Price of a million cached prompt tokens (null: same as input).",
    )
    output: float = Field(ge=0, description="Price of a million completion tokens.")

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """USD for one request; `cached_tokens` is the cached part of `prompt_tokens`."""
        cached_price = self.input if self.cached_input is None else self.cached_input
        uncached = max(prompt_tokens - cached_tokens, 0)
        total = uncached * self.input + cached_tokens * cached_price
        return (total + completion_tokens * self.output) / 1_000_000


class CacheConfig(_Model):
    """The request cache that makes reruns and resumes free."""

    enabled: bool = Field(
        default=True, description="Cache every model request by its full content."
    )
    dir: str | None = Field(
        default=None,
        description="Cache folder; null means OUT/cache so that a run folder is self-contained. "
        "Point several runs at one folder to share answers.",
    )


class OutputConfig(_Model):
    """Where and how the tables are written."""

    dir: str = Field(
        default="out",
        description="Output folder (OUT); relative to the config file when set there.",
    )
    shard_size: int = Field(
        default=16, ge=1, description="Trajectories per shard (the unit of resume)."
    )
    progress: bool = Field(
        default=True, description="Show progress bars (only when stderr is a TTY)."
    )


class PublishConfig(_Model):
    """The Hugging Face dataset layout and upload."""

    repo: str | None = Field(
        default=None, pattern=r"^[\w.-]+/[\w.-]+$", description="Hub dataset repo `org/name`."
    )
    private: bool = Field(default=True, description="Create the Hub repo as private.")
    splits: dict[str, float] = Field(
        default_factory=lambda: {"train": 0.9, "validation": 0.05, "test": 0.05},
        description="Split name -> fraction of trajectories (made by trajectory, deterministic).",
    )
    license: str = Field(
        default="other", description="Licence id for the dataset card (mind the inputs' licences)."
    )

    @field_validator("splits")
    @classmethod
    def _fractions(cls, splits: dict[str, float]) -> dict[str, float]:
        if not splits:
            raise ValueError("at least one split is needed")
        for name, fraction in splits.items():
            if not re.fullmatch(r"\w+", name):
                raise ValueError(f"split name {name!r} must be letters, digits or _")
            if fraction < 0:
                raise ValueError(f"split {name!r} has a negative fraction")
        if not math.isclose(sum(splits.values()), 1.0, abs_tol=1e-6):
            raise ValueError(f"split fractions must sum to 1, got {sum(splits.values()):g}")
        return splits


class ScrubConfig(_Model):
    """Secret redaction before remote requests and before publishing."""

    enabled: bool = Field(default=True, description="Redact credentials (keys, tokens, passwords).")
    emails: bool = Field(default=False, description="Also redact email addresses.")


class PipelineConfig(_Model):
    """A whole run: inputs → steps → candidates → references → judgements → selection."""

    inputs: list[InputSpec] = Field(min_length=1, description="Trajectory sources.")
    eligibility: EligibilityConfig = Field(
        default_factory=EligibilityConfig, description="Which steps are compressible."
    )
    teacher: TeacherConfig = Field(
        default_factory=TeacherConfig,
        description="Compressor teacher endpoint and sampling.",
    )
    agent: AgentConfig = Field(
        default_factory=AgentConfig, description="Agent endpoint used for the gate."
    )
    references: ReferencesConfig = Field(
        default_factory=ReferencesConfig, description="Reference actions."
    )
    gate: GateConfig = Field(default_factory=GateConfig, description="Action-preservation gate.")
    selection: SelectionConfig = Field(
        default_factory=SelectionConfig, description="Supervision selection."
    )
    limits: LimitsConfig = Field(default_factory=LimitsConfig, description="Rates and budgets.")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Model name -> USD per million tokens, for cost."
    )
    cache: CacheConfig = Field(default_factory=CacheConfig, description="Request cache.")
    output: OutputConfig = Field(default_factory=OutputConfig, description="Output tables.")
    publish: PublishConfig = Field(default_factory=PublishConfig, description="Dataset publish.")
    scrub: ScrubConfig = Field(default_factory=ScrubConfig, description="Secret scrubbing.")
    seed: int = Field(default=0, description="Seed of every sampled request and of the splits.")

    @model_validator(mode="after")
    def _budget_needs_prices(self) -> PipelineConfig:
        if self.limits.budget_usd is None:
            return self
        for role, endpoint in (("teacher", self.teacher), ("agent", self.agent)):
            remote = endpoint.provider in ("openai", "anthropic")
            if remote and endpoint.model not in self.prices:
                raise ValueError(
                    f"limits.budget_usd is set but prices has no entry for {role}.model "
                    f"{endpoint.model!r}: add prices.{endpoint.model}.{{input, output}}"
                )
        return self

    def cache_dir(self) -> Path:
        """The request cache folder (OUT/cache unless configured)."""
        return Path(self.cache.dir) if self.cache.dir else Path(self.output.dir) / "cache"


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> PipelineConfig:
    """Read a YAML config, apply `dotted.key=value` overrides (values parsed as YAML), validate."""
    path = Path(path)
    raw = _read_yaml(path)
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


def config_hash(cfg: PipelineConfig) -> str:
    """12 hex digits of sha256 over the canonical JSON of every key that changes the output."""
    data = cfg.model_dump(mode="json")
    for dotted in HASH_EXCLUDED:
        *parents, last = dotted.split(".")
        node = data
        for part in parents:
            node = node[part]
        node.pop(last, None)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def dump_resolved(cfg: PipelineConfig) -> str:
    """The fully resolved config (defaults filled in, paths absolute) as YAML."""
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


# --- reading and paths -------------------------------------------------------------------


def _read_yaml(path: Path) -> dict[str, Any]:
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
            if isinstance(item, str):
                inputs[i] = resolve_input_path(item, base)
            elif isinstance(item, dict) and isinstance(item.get("path"), str):
                item["path"] = resolve_input_path(item["path"], base)
    for section in ("output", "cache"):
        node = raw.get(section)
        if isinstance(node, dict) and isinstance(node.get("dir"), str):
            node["dir"] = str(_absolute(node["dir"], base))


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
