"""The NAP core's settings (`builder.nap.step.NapSettings`) read from a pipeline config: one mapping
that the run, the plan and the evaluation share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from builder.config import EndpointConfig, PipelineConfig
from builder.llm.model_rules import REASONING_TOKENS, effective_temperature, model_rules

if TYPE_CHECKING:
    from builder.nap.step import NapSettings
    from builder.nap.types import CompressorSampling, ReplaySettings


def gate_counts(cfg: PipelineConfig) -> tuple[int, int]:
    """(min_agree, min_references) the config's gate works with, defaults filled in."""
    from builder.nap.gate import agree_counts

    return agree_counts(
        cfg.references.mode, cfg.references.samples, cfg.gate.min_agree, cfg.gate.min_references
    )


def nap_settings(cfg: PipelineConfig) -> NapSettings:
    """The NAP core's settings from a pipeline config, with what the models really get: a
    model that refuses any temperature but 1 samples at 1 (so the requests, their cache keys,
    the control's choice and the report say 1.0), and a reasoning model gets its thinking
    headroom on top of max_tokens (`builder.llm.model_rules`)."""
    from builder.nap.step import NapSettings

    teacher, agent = cfg.teacher, cfg.agent
    return NapSettings(
        teacher_samples=teacher.samples,
        teacher_temperature=_temperature(teacher, teacher.temperature),
        teacher_max_tokens=teacher.max_tokens + reasoning_tokens(teacher),
        rules=tuple(cfg.teacher.rules),
        reference_mode=cfg.references.mode,
        reference_samples=cfg.references.samples,
        reference_temperature=_temperature(agent, cfg.references.temperature),
        agent_temperature=_temperature(agent, agent.temperature),
        agent_max_tokens=agent.max_tokens + reasoning_tokens(agent),
        agent_context_window=agent.context_window,
        format_retries=cfg.agent.format_retries,
        similarity=cfg.gate.similarity,
        aggregate=cfg.gate.aggregate,
        top_k=cfg.gate.top_k,
        threshold=cfg.gate.threshold,
        min_agree=cfg.gate.min_agree,
        min_references=cfg.gate.min_references,
        max_per_step=cfg.selection.max_per_step,
        fallback=cfg.selection.fallback,
        exhaustive=cfg.selection.exhaustive,
        max_preference_pairs=cfg.selection.max_preference_pairs,
        seed=cfg.seed,
        gate_mode=cfg.gate.mode,
        likelihood_score=cfg.gate.likelihood_score,
        likelihood_threshold=cfg.gate.likelihood_threshold,
        control=cfg.gate.control,
        control_floor=cfg.gate.control_floor,
        replay=replay_settings(cfg),
    )


def replay_settings(cfg: PipelineConfig) -> ReplaySettings:
    """The round, the prefix mode and the prefix compressor with its identity."""
    from builder.nap.types import ReplaySettings

    replay = cfg.replay
    spec = replay.prefix_compressor
    return ReplaySettings(
        round=replay.round_number,
        prefix=replay.prefix,
        compressor=spec,
        compressor_id=compressor_identity(spec, cfg) if spec else None,
        endpoint=sampling_of(cfg) if spec == "endpoint" else None,
    )


def compressor_identity(spec: str, cfg: PipelineConfig) -> str:
    """The SPEC with the model behind it (`teacher:gpt-4.1-mini`, `endpoint:my-compressor`),
    as rows record it; rules and the written compressors are their SPEC."""
    if spec == "teacher":
        return f"teacher:{cfg.teacher.model}"
    if spec == "endpoint" and cfg.compressor is not None:
        return f"endpoint:{cfg.compressor.model}"
    return spec


def sampling_of(cfg: PipelineConfig) -> CompressorSampling | None:
    """How the `endpoint` compressor is asked, from the config's `compressor:` block."""
    from builder.nap.types import CompressorSampling

    block = cfg.compressor
    if block is None:
        return None
    return CompressorSampling(block.temperature, block.max_tokens, block.structured)


def _temperature(endpoint: EndpointConfig, temperature: float) -> float:
    return effective_temperature(endpoint.provider, endpoint.model, temperature)


def reasoning_tokens(endpoint: EndpointConfig) -> int:
    """The thinking headroom added to the role's max_tokens (config, else the model table)."""
    if endpoint.reasoning_tokens is not None:
        return endpoint.reasoning_tokens
    return REASONING_TOKENS if model_rules(endpoint.provider, endpoint.model).reasoning else 0
