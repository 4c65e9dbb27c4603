"""Tokens saved: one definition for the progress line, the report, the plots and the card.

A step's saving is `raw_tokens - rendered_tokens` of its *best* supervision row: the selected
(non-fallback) row of rank 0, i.e. the shortest passing candidate. Tokens saved is the sum over
steps. A step with several selected rows counts once (the other rows are extra training
targets, not extra savings); a fallback `unchanged` row saves nothing and is not counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from schemas.supervision import SupervisionRecord

if TYPE_CHECKING:
    import polars as pl

BEST_RANK = 0


def is_best(row: SupervisionRecord) -> bool:
    """The row that stands for its step in every tokens-saved figure."""
    return not row.is_fallback and row.rank == BEST_RANK


def tokens_saved(rows: Iterable[SupervisionRecord]) -> int:
    """Tokens saved by these supervision rows (best row per step, see the module docstring)."""
    return sum((r.raw_tokens or 0) - (r.rendered_tokens or 0) for r in rows if is_best(r))


def best_rows_expr() -> pl.Expr:
    """The same rule as `is_best`, as a polars filter over the supervision table."""
    import polars as pl

    return ~pl.col("is_fallback") & (pl.col("rank") == BEST_RANK)
