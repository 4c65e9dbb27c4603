"""The NAP core's settings (`builder.nap.step.NapSettings`) read from a pipeline config: one mapping
that the run, the plan and the evaluation share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from builder.config import PipelineConfig

if TYPE_CHECKING:
    from builder.nap.step import NapSettings


def gate_counts(cfg: PipelineConfig) -> tuple[int, int]:
    """(min_agree, min_references) the config's gate works with, defaults filled in."""
    from builder.nap.gate import agree_counts

    return agree_counts(
        cfg.references.mode, cfg.references.samples, cfg.gate.min_agree, cfg.gate.min_references
    )


def nap_settings(cfg: PipelineConfig) -> NapSettings:
    """The NAP core's settings from a pipeline config."""
    from builder.nap.step import NapSettings

    return NapSettings(
        teacher_samples=cfg.teacher.samples,
        teacher_temperature=cfg.teacher.temperature,
        teacher_max_tokens=cfg.teacher.max_tokens,
        rules=tuple(cfg.teacher.rules),
        reference_mode=cfg.references.mode,
        reference_samples=cfg.references.samples,
        reference_temperature=cfg.references.temperature,
        agent_temperature=cfg.agent.temperature,
        agent_max_tokens=cfg.agent.max_tokens,
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
    )
