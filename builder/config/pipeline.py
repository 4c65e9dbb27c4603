"""The whole pipeline config, the keys that leave its hash, and where the cache lives."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from builder.config.endpoints import (
    AgentConfig,
    CompressorConfig,
    EndpointConfig,
    TeacherConfig,
)
from builder.config.rounds_config import ReplayConfig
from builder.config.run_settings import (
    CacheConfig,
    ExecutionConfig,
    LimitsConfig,
    OutputConfig,
    Price,
    PublishConfig,
    ScrubConfig,
)
from builder.config.stages import (
    EligibilityConfig,
    ExcludeInstancesConfig,
    GateConfig,
    InputSpec,
    ReferencesConfig,
    SelectionConfig,
    _Model,
)
from builder.llm.endpoint_kinds import is_paid

HASH_EXCLUDED = (
    "limits",
    "prices",
    "cache",
    "execution",
    "output.dir",
    "output.local_dir",
    "output.progress",
    "output.log_every_s",
    "publish",
    "teacher.api_key_env",
    "agent.api_key_env",
    "teacher.transport",
    "agent.transport",
    "gate.control_floor",  # only the report's warning depends on it
    "compressor",
)
"""Keys that do not change any row of the output, so changing them keeps the config hash and a
run can be resumed with, say, more concurrency or a new budget. `compressor` is only read by
`nap-builder eval` (whose outputs are not run tables), so adding one keeps a run's tables."""


class PipelineConfig(_Model):
    """A whole run: inputs → steps → candidates → references → judgements → selection."""

    inputs: list[InputSpec] = Field(min_length=1, description="Trajectory sources.")
    exclude_instances: ExcludeInstancesConfig = Field(
        default_factory=ExcludeInstancesConfig,
        description="Task instances whose trajectories are dropped at ingest (decontamination): "
        "a named set (`swe-bench-verified`, `swe-bench-lite`), a file of ids, or a list.",
    )
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
    replay: ReplayConfig = Field(
        default_factory=ReplayConfig,
        description="The round and what the agent sees of earlier observations.",
    )
    limits: LimitsConfig = Field(default_factory=LimitsConfig, description="Rates and budgets.")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Model name -> USD per million tokens, for cost."
    )
    cache: CacheConfig = Field(default_factory=CacheConfig, description="Request cache.")
    output: OutputConfig = Field(default_factory=OutputConfig, description="Output tables.")
    publish: PublishConfig = Field(default_factory=PublishConfig, description="Dataset publish.")
    scrub: ScrubConfig = Field(default_factory=ScrubConfig, description="Secret scrubbing.")
    execution: ExecutionConfig = Field(
        default_factory=ExecutionConfig, description="Engine: this process or a Ray cluster."
    )
    seed: int = Field(default=0, description="Seed of every sampled request and of the splits.")
    compressor: CompressorConfig | None = Field(
        default=None,
        description="A trained compressor's endpoint, evaluated by `nap-builder eval --compressor "
        "endpoint` (null: none configured).",
    )

    @model_validator(mode="after")
    def _budget_needs_prices(self) -> PipelineConfig:
        if self.limits.budget_usd is None:
            return self
        roles: list[tuple[str, EndpointConfig]] = [("teacher", self.teacher), ("agent", self.agent)]
        if self.compressor is not None:
            roles.append(("compressor", self.compressor))
        for role, endpoint in roles:
            urls = (
                endpoint.base_url if isinstance(endpoint.base_url, list) else [endpoint.primary_url]
            )
            paid = any(is_paid(endpoint.provider, url) for url in urls)
            if paid and endpoint.model not in self.prices:
                raise ValueError(
                    f"limits.budget_usd is set but prices has no entry for {role}.model "
                    f"{endpoint.model!r}: add prices.{endpoint.model}.{{input, output}}"
                )
        return self

    @model_validator(mode="after")
    def _gate_counts_fit_the_references(self) -> PipelineConfig:
        available = 1 if self.references.mode == "logged" else self.references.samples
        for name in ("min_agree", "min_references"):
            value = getattr(self.gate, name)
            if value is not None and value > available:
                raise ValueError(
                    f"gate.{name}={value} but a step has at most {available} reference(s) "
                    f"(references.mode {self.references.mode!r}"
                    + (f", samples {available})" if self.references.mode == "sampled" else ")")
                    + f": lower gate.{name} or raise references.samples"
                )
        agree, needed = self.gate.min_agree, self.gate.min_references
        if agree is not None and needed is not None and agree > needed:
            raise ValueError(
                f"gate.min_agree={agree} is more than gate.min_references={needed}: a step "
                "could be judged with fewer references than a candidate must agree with"
            )
        return self

    @model_validator(mode="after")
    def _prefix_endpoint_configured(self) -> PipelineConfig:
        if self.replay.prefix_compressor == "endpoint" and self.compressor is None:
            raise ValueError(
                "replay.prefix_compressor: endpoint needs a `compressor:` block (provider, "
                "model, base_url of the server that runs the trained compressor)"
            )
        return self

    @model_validator(mode="after")
    def _ray_without_batch(self) -> PipelineConfig:
        batched = [r for r, e in (("teacher", self.teacher), ("agent", self.agent)) if e.batch]
        if self.execution.engine == "ray" and batched:
            raise ValueError(
                f"execution.engine=ray does not run batch roles ({', '.join(batched)}.batch: "
                "true): a batch round needs one queue for the whole run; use engine local"
            )
        return self

    @model_validator(mode="after")
    def _likelihood_needs_prompt_logprobs(self) -> PipelineConfig:
        if self.gate.mode != "likelihood":
            return self
        problem = likelihood_backend_problem(
            self.agent.provider, self.agent.primary_url, self.gate.likelihood_api
        )
        if problem:
            raise ValueError(problem)
        return self

    def local_output_dir(self) -> Path:
        """The local run folder: output.dir, or for an object store its local mirror."""
        from builder.storage.mirror import default_local_dir
        from builder.storage.uri import is_remote

        if not is_remote(self.output.dir):
            return Path(self.output.dir)
        return Path(self.output.local_dir or default_local_dir(self.output.dir))

    def cache_dir(self) -> Path:
        """The request cache folder (OUT/cache unless configured; always on local disk)."""
        return Path(self.cache.dir) if self.cache.dir else self.local_output_dir() / "cache"


def likelihood_backend_problem(provider: str, base_url: str | None, api: str | None) -> str | None:
    """Why `gate.mode: likelihood` cannot work with this agent endpoint, or None."""
    if provider == "anthropic":
        return (
            "gate.mode: likelihood needs prompt log-probabilities, and agent.provider "
            "'anthropic' offers none: use gate.mode: generate, or serve the agent with vLLM or "
            "SGLang (agent.provider: openai, agent.base_url, gate.likelihood_api)"
        )
    if provider == "local-server":
        return (
            "gate.mode: likelihood needs prompt log-probabilities, which the llama.cpp server "
            "(agent.provider: local-server) does not return: use agent.provider: local (the "
            "embedded model in process) or gate.mode: generate"
        )
    if provider == "openai" and base_url is None:
        return (
            "gate.mode: likelihood needs prompt log-probabilities, and the OpenAI chat API "
            "(agent.provider: openai without agent.base_url) offers none: use gate.mode: "
            "generate, or point agent.base_url at a vLLM or SGLang server"
        )
    if provider == "openai" and api is None:
        return (
            "gate.mode: likelihood with agent.base_url needs gate.likelihood_api: 'vllm' "
            "(prompt_logprobs on /v1/completions) or 'sglang' (return_logprob on /generate)"
        )
    return None
