"""The NAP gate: a candidate's similarities to the references, and whether it passes.

What "the candidate's action is one the agent would take on the raw context" means (the
default `agree` rule): at least `min_agree` of the references, sampled from the agent on
the raw context, are equivalent to it (similarity >= θ), out of at least `min_references`
valid references. The references say how the agent varies; the per-pair similarity says
only whether two actions are the same work. One matching reference cannot outvote the rest
the way an average can: with a mean of the top 3, one exact match and two near misses
scored (1 + 0.5 + 0.5) / 3 = 0.67 >= 0.65 and passed. A step with fewer valid references
than `min_references` is not judged at all (`builder.nap.step`, drop reason
`too_few_references`). The score of an `agree` verdict is the share of references that
agree. `mean_top_k`, `max` and `mean` remain for comparison with earlier runs.

In likelihood mode the "similarity" to a reference is `likelihood_similarity` of how much the
candidate lowers the reference action's log-probability (`likelihood_delta`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Aggregate = Literal["agree", "mean_top_k", "max", "mean"]


@dataclass(frozen=True, slots=True)
class GateRule:
    """How similarities to the references become a verdict."""

    how: Aggregate = "agree"
    threshold: float = 0.75
    top_k: int = 3
    min_agree: int = 2
    min_references: int = 4


def agree_counts(
    reference_mode: str, samples: int, min_agree: int | None, min_references: int | None
) -> tuple[int, int]:
    """(min_agree, min_references) with the defaults filled in: one logged reference must
    agree (1, 1); of sampled references two must agree (one sample alone could be a fluke),
    out of at least half of them."""
    logged = reference_mode == "logged"
    agree = min_agree or (1 if logged else min(2, samples))
    needed = min_references or (1 if logged else -(-samples // 2))
    return agree, max(needed, agree)


def verdict(similarities: Sequence[float], rule: GateRule) -> tuple[float, bool]:
    """(score, passed) of a candidate whose similarities to the valid references these are."""
    if rule.how == "agree":
        agreeing = sum(s >= rule.threshold for s in similarities)
        score = agreeing / len(similarities) if similarities else 0.0
        enough = len(similarities) >= rule.min_references
        return score, enough and agreeing >= max(1, rule.min_agree)
    score = aggregate(similarities, rule.how, rule.top_k)
    return score, bool(similarities) and passes(score, rule.threshold)


def aggregate(
    similarities: Sequence[float], how: Aggregate = "mean_top_k", top_k: int = 3
) -> float:
    """One score from the similarities to each reference action (0.0 when there are none);
    `agree` needs θ and is `verdict`'s."""
    if how == "agree":
        raise ValueError("the agree rule needs θ: use verdict()")
    if not similarities:
        return 0.0
    if how == "max":
        return max(similarities)
    if how == "mean":
        return sum(similarities) / len(similarities)
    best = sorted(similarities, reverse=True)[: max(1, top_k)]
    return sum(best) / len(best)


def passes(score: float, threshold: float = 0.65) -> bool:
    return score >= threshold


LikelihoodScore = Literal["mean", "sum", "grounded"]
Scored = Sequence[tuple[str, float]]  # (token text, log-probability) of an action's tokens


def likelihood_delta(
    with_candidate: Scored,
    raw: Scored,
    how: LikelihoodScore = "mean",
    observation: str = "",
    elsewhere: str = "",
) -> float:
    """How much a candidate changes the log-probability of one reference action (nats;
    negative = less likely than with the raw observation).

    `mean` is per token, `sum` over the action; `grounded` is the mean over the tokens that
    occur in the raw `observation` but not `elsewhere` in the context (the information only
    this observation holds), and `mean` when no token is grounded. Token lists may differ in
    length where the tokenizer merged differently at the boundary; means are taken per list.
    """
    if how == "sum":
        return sum(v for _, v in with_candidate) - sum(v for _, v in raw)
    if how == "grounded":
        picked_c = [v for t, v in with_candidate if grounded(t, observation, elsewhere)]
        picked_r = [v for t, v in raw if grounded(t, observation, elsewhere)]
        if picked_c and picked_r:
            return _mean(picked_c) - _mean(picked_r)
    return _mean([v for _, v in with_candidate]) - _mean([v for _, v in raw])


def grounded(token: str, observation: str, elsewhere: str) -> bool:
    """A token (2+ characters, not only punctuation) seen in the observation and nowhere else."""
    text = token.strip()
    if len(text) < 2 or not any(c.isalnum() for c in text):
        return False
    return text in observation and text not in elsewhere


def likelihood_similarity(delta: float) -> float:
    """A delta as a [0, 1] score the gate aggregates like a similarity: min(1, exp(delta)),
    the probability ratio (per token for `mean`, of the whole action for `sum`), capped."""
    return 1.0 if delta >= 0 else math.exp(delta)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
