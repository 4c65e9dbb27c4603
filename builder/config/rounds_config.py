"""The `replay` section: which round a run is, and what the agent sees of earlier observations
when its next action is judged (README, "Online rounds")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from builder.config.stages import _Model

PrefixMode = Literal["raw", "compressed", "deployed"]


class ReplayConfig(_Model):
    """What the agent's context holds before the judged observation: the raw outputs (the
    offline round), the outputs of a compressor (on-policy prefixes, simulated offline), or
    what a deployed compressor showed the agent (deployed runs as input)."""

    prefix: PrefixMode = Field(
        default="raw",
        description="Earlier observations in the agent's context: `raw` (the tool outputs as "
        "they were; offline round 0), `compressed` (every earlier eligible observation "
        "replaced by `prefix_compressor`'s output; the observation judged stays raw for the "
        "references), or `deployed` (inputs logged by an agent that ran with a compressor: the "
        "context keeps what it showed, the judged observation is restored to raw, and only "
        "the steps it changed are relabelled).",
    )
    prefix_compressor: str | None = Field(
        default=None,
        description="With `prefix: compressed`, the compressor whose outputs fill the prefix, "
        "as a SPEC of `nap-builder eval --compressor`: `rule:NAME`, `teacher` (its first valid "
        "sample), `endpoint` (the `compressor:` block: a trained compressor), `omit` or "
        "`unchanged`. Its identity is part of the config hash.",
    )
    round: int | None = Field(
        default=None,
        ge=0,
        description="The round every row of the run carries: 0 the offline round (raw "
        "prefixes), 1, 2, ... online rounds; null: 0 with raw prefixes, else 1.",
    )

    @field_validator("prefix_compressor")
    @classmethod
    def _known_spec(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from builder.teacher.specs import spec_problem  # the rule registry: only when checking

        problem = spec_problem(value.strip(), has_endpoint=True)  # the block: see PipelineConfig
        if problem is not None:
            raise ValueError(problem)
        return value.strip()

    @model_validator(mode="after")
    def _consistent(self) -> ReplayConfig:
        if self.prefix == "compressed" and self.prefix_compressor is None:
            raise ValueError(
                "prefix: compressed needs prefix_compressor (e.g. rule:head_tail, teacher, "
                "endpoint)"
            )
        if self.prefix != "compressed" and self.prefix_compressor is not None:
            raise ValueError(
                f"prefix_compressor is only used with prefix: compressed (prefix is "
                f"{self.prefix!r}); remove it, or set prefix: compressed"
            )
        if self.round == 0 and self.prefix != "raw":
            raise ValueError(
                f"round 0 is the offline round, with raw prefixes; prefix {self.prefix!r} is an "
                "online round: set round to 1 or more (or leave it null)"
            )
        if self.round is not None and self.round > 0 and self.prefix == "raw":
            raise ValueError(
                "an online round (round > 0) judges steps in the context a compressor made: set "
                "prefix to compressed or deployed, or round to 0"
            )
        return self

    @property
    def round_number(self) -> int:
        """The round rows carry (the null default resolved)."""
        if self.round is not None:
            return self.round
        return 0 if self.prefix == "raw" else 1

    @property
    def is_default(self) -> bool:
        """The offline round as before the section existed (left out of the config hash)."""
        return self.prefix == "raw" and self.round_number == 0
