"""Token usage, cost and the run-wide budget, per stage and per run.

Only requests actually sent are paid for: cache hits are counted but cost nothing.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from builder.errors import BudgetExceededError, ConfigError
from builder.llm.protocol import Usage


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens. `cached_input` defaults to `input` when the model has no discount."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = usage.cached_prompt_tokens
        cached_rate = self.input if self.cached_input is None else self.cached_input
        fresh = max(0, usage.prompt_tokens - cached)
        return (
            fresh * self.input + cached * cached_rate + usage.completion_tokens * self.output
        ) / 1e6


class PriceTable:
    """Model name → price. A dated model name ("gpt-4o-2024-08-06") falls back to the longest
    configured prefix ("gpt-4o")."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, float]]) -> PriceTable:
        """From config: `{model: {input: .., output: .., cached_input: ..}}`."""
        try:
            return cls({model: ModelPrice(**dict(p)) for model, p in data.items()})
        except TypeError as exc:
            raise ConfigError(
                f"price table: {exc}; each model needs `input` and `output` (USD per million "
                "tokens) and may have `cached_input`"
            ) from exc

    def get(self, model: str) -> ModelPrice | None:
        if model in self._prices:
            return self._prices[model]
        prefixes = [name for name in self._prices if model.startswith(name)]
        return self._prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, usage: Usage) -> float:
        price = self.get(model)
        return price.cost(usage) if price is not None else 0.0


@dataclass
class StageUsage:
    """Counters of one stage (or of the whole run). `requests` counts requests sent."""

    requests: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost_usd: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_usage(self, usage: Usage, cost_usd: float) -> None:
        self.requests += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_prompt_tokens += usage.cached_prompt_tokens
        self.cost_usd += cost_usd

    def merge(self, other: StageUsage) -> None:
        for f in dataclasses.fields(self):
            if f.name != "errors":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.errors.update(other.errors)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["errors"] = dict(sorted(self.errors.items()))
        return data


class UsageLedger:
    """Totals per stage and for the run, for progress bars and reports."""

    def __init__(self) -> None:
        self.stages: dict[str, StageUsage] = {}

    def stage(self, name: str) -> StageUsage:
        return self.stages.setdefault(name, StageUsage())

    def total(self) -> StageUsage:
        total = StageUsage()
        for usage in self.stages.values():
            total.merge(usage)
        return total

    def as_dict(self) -> dict[str, Any]:
        return {
            "stages": {name: u.as_dict() for name, u in sorted(self.stages.items())},
            "total": self.total().as_dict(),
        }


@dataclass
class Budget:
    """Run-wide spending limit in USD and/or tokens (prompt + completion). None: no limit.

    Requests already in flight when the limit is reached finish and are paid; no new request
    is sent after that.
    """

    max_usd: float | None = None
    max_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0

    def spend(self, usage: Usage, cost_usd: float) -> None:
        self.spent_usd += cost_usd
        self.spent_tokens += usage.prompt_tokens + usage.completion_tokens

    def check(self) -> None:
        """Raise `BudgetExceededError` when a limit is reached."""
        if self.max_usd is not None and self.spent_usd >= self.max_usd:
            raise BudgetExceededError(
                f"run budget reached: ${self.spent_usd:.4f} spent of max_usd=${self.max_usd:.4f}; "
                "no new requests are sent. Raise budget.max_usd and rerun: cached answers are "
                "not paid again."
            )
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            raise BudgetExceededError(
                f"run budget reached: {self.spent_tokens} tokens spent of "
                f"max_tokens={self.max_tokens}; no new requests are sent. Raise "
                "budget.max_tokens and rerun: cached answers are not paid again."
            )
