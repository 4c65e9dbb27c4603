"""Config sections of the model endpoints: the teacher, the agent, and a trained compressor
under evaluation."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from builder.config.stages import _Model

Provider = Literal["local", "local-server", "openai", "anthropic"]
LOCAL_MODEL = "gemma-3-270m"  # the embedded GGUF's alias (builder.llm.model_files.MODEL_ALIAS)
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


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
        "same; batch jobs always use the SDK. The Anthropic SDK runs on aiohttp for `direct` "
        "and `aiohttp`, on httpx for `httpx`.",
    )
    context_window: int | None = Field(
        default=None,
        ge=1,
        description="The model's context window in tokens. Set, a step whose agent context "
        "(cl100k tokens of the replayed messages and tools) plus max_tokens exceeds it is "
        "dropped before anything is sent (`context_window` in the report's dropped steps); "
        "cl100k is not every model's tokenizer, so leave a margin. A step the endpoint refuses "
        "as too long is dropped with its reason either way.",
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        default=None,
        description="`reasoning_effort` sent to OpenAI reasoning models (gpt-5, o-series); "
        "null sends none (the model's default).",
    )
    reasoning_tokens: int | None = Field(
        default=None,
        ge=0,
        description="Completion tokens added to max_tokens for a model that reasons before "
        "answering (its thinking counts against the limit); null: 4096 for the reasoning "
        "models of builder/llm/model_rules.py, 0 otherwise.",
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
