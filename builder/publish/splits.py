"""Splits by trajectory: a hash of (seed, trajectory_id) placed on the cumulative fractions.

One trajectory never lands in two splits, every config agrees, and the assignment needs no
global view of the data (rows stream through). The price: a split gets about `fraction x
trajectories` trajectories, so a small dataset may leave a small split empty; an empty split
is not declared (there is no file for it) and the card says so.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping

from builder.errors import PublishError

DEFAULT_SPLITS: dict[str, float] = {"train": 0.9, "validation": 0.05, "test": 0.05}
ID_COLUMN = "trajectory_id"  # what splits are made by


def check_splits(splits: Mapping[str, float]) -> dict[str, float]:
    """Split names must be words and fractions non-negative, summing to 1."""
    if not splits:
        raise PublishError("publish.splits is empty: give e.g. {train: 0.9, test: 0.1}")
    for name, fraction in splits.items():
        if not re.fullmatch(r"[A-Za-z0-9_]+", name) or fraction < 0:
            raise PublishError(f"publish.splits: bad split {name!r}: {fraction!r}")
    if not math.isclose(sum(splits.values()), 1.0, abs_tol=1e-6):
        raise PublishError(f"publish.splits fractions sum to {sum(splits.values()):g}, not 1")
    return dict(splits)


def split_of(trajectory_id: str, splits: Mapping[str, float], seed: int = 0) -> str:
    """The split of a trajectory: a sha256 of (seed, id) placed on the cumulative fractions."""
    digest = hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    cumulative = 0.0
    names = list(splits)
    for name in names:
        cumulative += splits[name]
        if point < cumulative:
            return name
    return next(n for n in reversed(names) if splits[n] > 0)


def count_per_split(assigned: Mapping[str, str], splits: Mapping[str, float]) -> dict[str, int]:
    """Trajectories per split (0 for a split nothing landed in)."""
    counts = dict.fromkeys(splits, 0)
    for split in assigned.values():
        counts[split] += 1
    return counts
