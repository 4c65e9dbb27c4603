"""The records and settings the NAP core passes around (`builder.nap.step` and its stages)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from builder.ingest.formats.base import FormatAdapter
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse
from builder.nap.control import control_mode
from builder.nap.gate import Aggregate, GateRule, agree_counts
from builder.steps.replay import RAW, Prefix
from schemas.candidates import CandidateRecord
from schemas.common import RAW_PREFIX
from schemas.judgements import JudgementRecord
from schemas.preferences import PreferenceRecord
from schemas.prefixes import PrefixRecord
from schemas.references import ReferenceRecord
from schemas.round_steps import RoundStepRecord
from schemas.steps import Action, StepRecord
from schemas.supervision import SupervisionRecord
from schemas.trajectories import TrajectoryRecord

Similarity = Callable[[Action, Action], float]
JudgeOne = Callable[[CandidateRecord, int], Awaitable[tuple[JudgementRecord, int]]]


class Completer(Protocol):
    """What NAP needs from an LLM client (`LLMClient` satisfies it)."""

    provider: ChatProvider

    async def complete(self, request: ChatRequest, *, stage: str) -> ChatResponse: ...


@dataclass(frozen=True)
class CompressorSampling:
    """How the `endpoint` compressor (the config's `compressor:` block) is asked."""

    temperature: float = 0.0
    max_tokens: int = 1024
    structured: bool = True


@dataclass(frozen=True)
class ReplaySettings:
    """The round and what the agent sees of earlier observations (`replay` in the config)."""

    round: int = 0
    prefix: str = RAW_PREFIX  # raw | compressed | deployed
    compressor: str | None = None  # the SPEC filling compressed prefixes
    compressor_id: str | None = None  # the SPEC with its model, recorded on every row
    endpoint: CompressorSampling | None = None  # with compressor `endpoint`


OFFLINE = ReplaySettings()


@dataclass(frozen=True)
class NapSettings:
    """Every NAP choice; defaults are the sampled-reference pipeline's (the reference
    pipeline's sampling, DESIGN.md §1, with the `agree` gate of `builder.nap.gate`)."""

    teacher_samples: int = 8
    teacher_temperature: float = 1.0
    teacher_max_tokens: int = 1024
    teacher_structured: bool = True
    rules: tuple[str, ...] = ()
    reference_mode: str = "sampled"  # sampled | logged
    reference_samples: int = 8
    reference_temperature: float = 0.7
    agent_temperature: float = 0.0
    agent_max_tokens: int = 512
    agent_context_window: int | None = None  # tokens; a larger agent context is not sent
    format_retries: int = 2
    similarity: str = "semantic"
    aggregate: Aggregate = "agree"
    top_k: int = 3
    threshold: float = 0.75
    min_agree: int | None = None  # None: from reference_mode and samples (`agree_counts`)
    min_references: int | None = None
    max_per_step: int = 4
    fallback: str = "drop"  # drop | unchanged
    exhaustive: bool = False
    max_preference_pairs: int | None = 4  # None: every passing x failing pair
    seed: int = 0
    gate_mode: str = "generate"  # generate | likelihood
    likelihood_score: str = "mean"  # mean | sum | grounded
    likelihood_threshold: float = 0.5
    control: str = "auto"  # auto | judged
    control_floor: float = 0.5
    replay: ReplaySettings = OFFLINE

    @property
    def agree_counts(self) -> tuple[int, int]:
        """(min_agree, min_references) in force (`builder.nap.gate.agree_counts`)."""
        return agree_counts(
            self.reference_mode, self.reference_samples, self.min_agree, self.min_references
        )

    @property
    def gate_rule(self) -> GateRule:
        """The generate-mode verdict rule (θ on the action similarity)."""
        return GateRule(self.aggregate, self.threshold, self.top_k, *self.agree_counts)

    @property
    def likelihood_rule(self) -> GateRule:
        """The likelihood-mode verdict rule (θ on min(1, exp(d)))."""
        return GateRule(self.aggregate, self.likelihood_threshold, self.top_k, *self.agree_counts)

    @property
    def control_mode(self) -> str:
        """How this run's control is obtained (`builder.nap.control.control_mode`)."""
        return control_mode(
            self.control,
            self.reference_mode,
            self.reference_samples,
            self.reference_temperature,
            self.agent_temperature,
        )


@dataclass
class StepResult:
    candidates: list[CandidateRecord] = field(default_factory=list)
    references: list[ReferenceRecord] = field(default_factory=list)
    judgements: list[JudgementRecord] = field(default_factory=list)
    supervision: list[SupervisionRecord] = field(default_factory=list)
    preferences: list[PreferenceRecord] = field(default_factory=list)
    dropped: str | None = None  # why the step produced no supervision
    agent_requests: int = 0  # references, judgements and the control
    control_requests: int = 0
    judge_requests: int = 0
    judge_requests_exhaustive: int = 0  # judging every unique valid candidate once
    deployed: JudgementRecord | None = None  # deployed runs: the deployed compression's verdict
    prefixes: list[PrefixRecord] = field(default_factory=list)  # this observation, compressed
    round_steps: list[RoundStepRecord] = field(default_factory=list)  # the step's one row


@dataclass(frozen=True)
class StepJob:
    traj: TrajectoryRecord
    step: StepRecord
    adapter: FormatAdapter
    prefix: Prefix = RAW  # what the agent sees of earlier observations
