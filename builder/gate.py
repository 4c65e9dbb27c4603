"""The NAP gate: aggregate a candidate's similarities to the references and compare with θ."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Aggregate = Literal["mean_top_k", "max", "mean"]


def aggregate(
    similarities: Sequence[float], how: Aggregate = "mean_top_k", top_k: int = 3
) -> float:
    """One score from the similarities to each reference action (0.0 when there are none)."""
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
