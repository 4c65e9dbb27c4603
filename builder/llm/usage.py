"""Token usage, cost and the run-wide budget, per stage and per run.

Only requests actually sent are paid for: cache hits are counted but cost nothing.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from builder.errors import ConfigError
from builder.llm.protocol import Usage


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens. `cached_input` (cache reads) defaults to `input`; cache writes
    default to Anthropic's multipliers of `input`: 1.25x (5-minute cache), 2x (1-hour)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None

    def parts(self, usage: Usage) -> dict[str, float]:
        """USD by token kind: uncached input, cache reads, cache writes, output."""
        read_rate = self.input if self.cached_input is None else self.cached_input
        write_rate = 1.25 * self.input if self.cache_write is None else self.cache_write
        write_1h_rate = 2.0 * self.input if self.cache_write_1h is None else self.cache_write_1h
        written = usage.cache_write_tokens + usage.cache_write_1h_tokens
        fresh = max(0, usage.prompt_tokens - usage.cached_prompt_tokens - written)
        return {
            "uncached": fresh * self.input / 1e6,
            "cache_read": usage.cached_prompt_tokens * read_rate / 1e6,
            "cache_write": (
                usage.cache_write_tokens * write_rate + usage.cache_write_1h_tokens * write_1h_rate
            )
            / 1e6,
            "output": usage.completion_tokens * self.output / 1e6,
        }

    def cost(self, usage: Usage) -> float:
        return sum(self.parts(usage).values())

    def worst_case(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD of a request if every prompt token were billed at the highest input rate."""
        rates = [self.input, self.cached_input or 0.0, self.cache_write or 1.25 * self.input]
        return (prompt_tokens * max(rates) + completion_tokens * self.output) / 1e6


class PriceTable:
    """Model name → price. A dated model name ("gpt-4o-2024-08-06") falls back to the longest
    configured prefix ("gpt-4o")."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, float]]) -> PriceTable:
        """From config: `{model: {input: .., output: .., cached_input: .., cache_write: ..}}`."""
        try:
            return cls({model: ModelPrice(**dict(p)) for model, p in data.items()})
        except TypeError as exc:
            raise ConfigError(
                f"price table: {exc}; each model needs `input` and `output` (USD per million "
                "tokens) and may have `cached_input`, `cache_write`, `cache_write_1h`"
            ) from exc

    def get(self, model: str) -> ModelPrice | None:
        if model in self._prices:
            return self._prices[model]
        prefixes = [name for name in self._prices if model.startswith(name)]
        return self._prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, usage: Usage) -> float:
        price = self.get(model)
        return price.cost(usage) if price is not None else 0.0


COST_PARTS = ("uncached", "cache_read", "cache_write", "output")


@dataclass
class StageUsage:
    """Counters of one stage (or of the whole run). `requests` counts logical requests sent,
    `http_requests` what the endpoint saw (n samples may take n HTTP requests). Cost is split
    by token kind, so a report shows what the prompt cache saved."""

    requests: int = 0
    http_requests: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    cost_uncached_usd: float = 0.0
    cost_cache_read_usd: float = 0.0
    cost_cache_write_usd: float = 0.0
    cost_output_usd: float = 0.0
    # completions cut at max_tokens (finish_reason `length` / stop_reason `max_tokens`: a
    # reasoning model's thinking counts against it) and completions with no text nor call
    truncated: int = 0
    empty: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_usage(
        self, usage: Usage, cost_usd: float, parts: Mapping[str, float] | None = None
    ) -> None:
        self.requests += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_prompt_tokens += usage.cached_prompt_tokens
        self.cache_write_tokens += usage.cache_write_tokens + usage.cache_write_1h_tokens
        self.cost_usd += cost_usd
        for name, usd in (parts or {}).items():
            setattr(self, f"cost_{name}_usd", getattr(self, f"cost_{name}_usd") + usd)

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
        found = self.stages.get(name)  # not setdefault: that builds a StageUsage every call
        if found is None:
            found = self.stages[name] = StageUsage()
        return found

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


from builder.llm.budget import Budget  # noqa: E402  (kept importable from here)

__all__ = ["COST_PARTS", "Budget", "ModelPrice", "PriceTable", "StageUsage", "UsageLedger"]
