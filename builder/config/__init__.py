"""Pipeline config: pydantic models of `pipelines/*.yaml`, CLI overrides, hash and dump.

Everything is validated at start-up so that a typo fails before any request is paid for; a
`ConfigError` names the key, the value it got and what is allowed. API keys are never config
values: endpoints name the environment variable that holds the key (`api_key_env`).

Layout: `stages` (sections of the NAP stages), `endpoints` (the teacher, agent and compressor
endpoints), `run_settings` (limits, prices, cache, output, publish, scrub), `pipeline` (the
whole config), `loading` (YAML, validation, hash, dump), `overrides` (`--set`), `error_text`
(readable validation errors).

Reads: `pipelines/*.yaml` and `--set` overrides. Writes: `config.resolved.yaml`, `config.hash`.
Entry point: `builder.config.loading.load_config`.
"""

from builder.config.endpoints import (
    LOCAL_MODEL,
    AgentConfig,
    CompressorConfig,
    EndpointConfig,
    Provider,
    TeacherConfig,
)
from builder.config.loading import (
    config_hash,
    dump_resolved,
    load_config,
    resolve_input_path,
    validate_config,
)
from builder.config.overrides import apply_override, split_key
from builder.config.pipeline import HASH_EXCLUDED, PipelineConfig
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
)

__all__ = [
    "HASH_EXCLUDED",
    "LOCAL_MODEL",
    "AgentConfig",
    "CacheConfig",
    "CompressorConfig",
    "EligibilityConfig",
    "EndpointConfig",
    "ExcludeInstancesConfig",
    "ExecutionConfig",
    "GateConfig",
    "InputSpec",
    "LimitsConfig",
    "OutputConfig",
    "PipelineConfig",
    "Price",
    "Provider",
    "PublishConfig",
    "ReferencesConfig",
    "ScrubConfig",
    "SelectionConfig",
    "TeacherConfig",
    "apply_override",
    "config_hash",
    "dump_resolved",
    "load_config",
    "resolve_input_path",
    "split_key",
    "validate_config",
]
