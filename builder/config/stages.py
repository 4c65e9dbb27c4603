"""Config sections of the NAP stages: inputs, eligibility, endpoints, references, gate and
selection."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Provider = Literal["local", "local-server", "openai", "anthropic"]
LOCAL_MODEL = "gemma-3-270m"  # the embedded GGUF's alias (builder.llm.model_files.MODEL_ALIAS)
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


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
    base_url: str | list[str] | None = Field(
        default=None,
        description="Endpoint URL, or a list of URLs serving the same model (replicas): "
        "requests spread over them, a step's requests stick to one, and a failing one leaves "
        "rotation for a while; null means the provider's default (or the managed server).",
    )
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself); "
        "null means the provider's usual variable (OPENAI_API_KEY, ANTHROPIC_API_KEY).",
    )
    temperature: float = Field(default=1.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=1024, ge=1, description="Maximum new tokens per completion.")
    transport: Literal["direct", "aiohttp", "httpx"] = Field(
        default="direct",
        description="HTTP stack of OpenAI-compatible endpoints: `direct` (JSON POSTs on one "
        "aiohttp session, no SDK in the request path: the least CPU per request, "
        "benchmarks/bench_run.py), or the OpenAI SDK on `aiohttp` or `httpx`. Answers are the "
        "same; batch jobs always use the SDK.",
    )
    batch: bool = Field(
        default=False,
        description="Send this role's requests through the provider's batch API (openai, "
        "anthropic): half the price, results within 24 h, the run goes in rounds.",
    )

    @model_validator(mode="after")
    def _batch_provider(self) -> EndpointConfig:
        if self.batch and self.provider not in ("openai", "anthropic"):
            raise ValueError(
                f"batch: true needs provider openai or anthropic, not {self.provider!r}"
            )
        return self

    @property
    def primary_url(self) -> str | None:
        """The URL that identifies the endpoint in cache keys and the config hash: the first of
        a list (replicas serve the same answers, so adding one keeps the cache and the run)."""
        return self.base_url[0] if isinstance(self.base_url, list) else self.base_url

    @field_validator("base_url")
    @classmethod
    def _urls(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            if not value:
                raise ValueError("an empty list of URLs; give at least one, or null")
            if len(set(value)) != len(value):
                raise ValueError("the same URL is listed twice")
        return value

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
    mode: Literal["generate", "likelihood"] = Field(
        default="generate",
        description="`generate` asks the agent for its action with the candidate in place and "
        "compares it with the references by `similarity`; `likelihood` decodes nothing: the "
        "agent model scores the tokens of each reference action given the candidate and given "
        "the raw context (one prefill each), see `likelihood_score`. Likelihood needs prompt "
        "log-probabilities: the embedded model (`agent.provider: local`) or a vLLM / SGLang "
        "server (`agent.provider: openai` with `base_url` and `likelihood_api`).",
    )
    likelihood_score: Literal["mean", "sum", "grounded"] = Field(
        default="mean",
        description="Likelihood score of one reference, d = (log-probability of its action "
        "tokens with the candidate) - (the same with the raw observation): `mean` per token, "
        "`sum` over the action, `grounded` mean over the action tokens that occur in the raw "
        "observation (falls back to `mean` when none does). Its similarity is min(1, exp(d)).",
    )
    likelihood_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Likelihood mode: pass when the aggregate of min(1, exp(d)) over the "
        "references is >= this (0.5 with `mean`: at most 0.69 nats per token lost).",
    )
    likelihood_api: Literal["vllm", "sglang"] | None = Field(
        default=None,
        description="How to get prompt log-probabilities from an OpenAI-compatible agent "
        "server: `vllm` (`prompt_logprobs` on /v1/completions) or `sglang` (`return_logprob` "
        "with `logprob_start_len` on /generate). Unused with the embedded model.",
    )
    control: Literal["auto", "judged"] = Field(
        default="auto",
        description="Judge-reliability control: every judged step also judges its raw "
        "observation as an `unchanged` control. `judged` always sends that agent request "
        "(the same request, and cache entry, as an `unchanged` candidate); `auto` instead "
        "reuses reference sample 0, gated against the other references, when that is "
        "equivalent: sampled references with at least 2 samples drawn at the agent's "
        "temperature.",
    )
    control_floor: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Warn loudly when the control's pass rate (how often the agent reproduces "
        "its reference on the raw context) is below this.",
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


class CompressorConfig(EndpointConfig):
    """A trained compressor behind an OpenAI-compatible endpoint, for `nap-builder eval
    --compressor endpoint`. It gets the teacher's prompt and its answer is parsed like the
    teacher's; `nap-builder run` never calls it."""

    provider: Provider = Field(
        default="openai",
        description="`openai` for any OpenAI-compatible server (vLLM, SGLang, llama.cpp) through "
        "base_url; the other providers work as for the teacher.",
    )
    temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature (greedy by default)."
    )
    structured: bool = Field(
        default=True,
        description="Ask for JSON matching the compressor schema (`response_format`); turn off "
        "for servers that reject it.",
    )
