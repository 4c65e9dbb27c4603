"""What known models accept, by model name, so that a run sends them only that from its first
request. A model this table does not know is adapted to when it refuses (the providers read
the refusal with `builder.llm.error_kinds`), once, for every request in flight.

- OpenAI `o1`, `o3`, `o4-mini`, `gpt-5*` (not `gpt-5-chat*`): temperature and top_p only at
  their default (1), so not sent; `max_completion_tokens`, which reasoning tokens count
  against; `reasoning_effort` accepted (platform.openai.com/docs/guides/reasoning).
- Anthropic models released after Claude Opus 4.6 (`claude-opus-4-7`, `-4-8`, `claude-*-5*`,
  `claude-fable*`): temperature, top_p and top_k refused (the API keeps only 1.0 for
  compatibility), so not sent
  (platform.claude.com/docs/en/about-claude/model-deprecations#api-parameter-deprecations).

A reasoning model spends part of its completion budget thinking, so such a role's requests get
`reasoning_tokens` more (configurable; `REASONING_TOKENS` by default) on top of `max_tokens`,
and a reply cut at the limit is reported per stage (`truncated` in the usage figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REASONING_TOKENS = 4096  # headroom for thinking, added to max_tokens of a reasoning model


@dataclass(frozen=True)
class ModelRules:
    fixed_sampling: bool = False  # temperature/top_p refused: the model samples at 1.0
    completion_tokens_param: str | None = None  # "max_completion_tokens" when max_tokens fails
    reasoning: bool = False  # spends completion tokens thinking; accepts reasoning_effort


OPENAI_REASONING = ModelRules(True, "max_completion_tokens", True)
ANTHROPIC_NO_SAMPLING = ModelRules(fixed_sampling=True)

_RULES: tuple[tuple[str, re.Pattern[str], ModelRules], ...] = (
    ("openai", re.compile(r"^(o1|o3|o4)(-|$)"), OPENAI_REASONING),
    ("openai", re.compile(r"^gpt-5(?!-chat)"), OPENAI_REASONING),
    (
        "anthropic",
        re.compile(r"^claude-(opus-4-[7-9]|(opus|sonnet|haiku)-([5-9]|\d{2})|fable)"),
        ANTHROPIC_NO_SAMPLING,
    ),
)


def model_rules(provider: str, model: str) -> ModelRules:
    """The rules of `model` behind `provider` (`openai` covers any OpenAI-compatible server,
    which may route to such a model: a name like `openai/gpt-5` is matched on its last part)."""
    name = model.rsplit("/", 1)[-1].lower()
    for kind, pattern, rules in _RULES:
        if kind == provider and pattern.search(name):
            return rules
    return ModelRules()


def effective_temperature(provider: str, model: str, temperature: float) -> float:
    """The temperature the model really samples at: 1.0 when it refuses any other."""
    return 1.0 if model_rules(provider, model).fixed_sampling else temperature
