"""Warnings about splits too small to be useful: the split is by a hash of the trajectory id,
so a small run lands wherever the hashes fall (35 of 46 rows in `test` was seen)."""

from __future__ import annotations

from collections.abc import Mapping

from builder.publish.card_inputs import ConfigLayout

# The config whose rows measure a split's share: the first of these that was published.
MEASURED = ("prompt_completion", "sft", "preferences", "candidates")


def split_warnings(
    configs: Mapping[str, ConfigLayout],
    trajectories: Mapping[str, int],
    fractions: Mapping[str, float],
    min_train_fraction: float,
    min_split_trajectories: int,
) -> list[str]:
    """One sentence per problem: `train` below its share of rows, a split with too few
    trajectories to measure anything (an empty one is not created at all)."""
    warnings = []
    name = next((c for c in MEASURED if c in configs), None)
    rows = configs[name].rows if name else {}
    total = sum(rows.values())
    if "train" in fractions and total:
        share = rows.get("train", 0) / total
        if share < min_train_fraction:
            warnings.append(
                f"`train` holds {rows.get('train', 0)} of {total} `{name}` rows ({share:.0%}), "
                f"below publish.min_train_fraction {min_train_fraction:g}: with "
                f"{sum(trajectories.values())} trajectories the hash split is uneven; publish "
                "more trajectories or set publish.splits (e.g. {train: 1.0})"
            )
    whole = sum(trajectories.values())
    for split, fraction in fractions.items():
        count = trajectories.get(split, 0)
        if fraction > 0 and count < min_split_trajectories:
            state = (
                "not created" if count == 0 else f"{count} trajector{'y' if count == 1 else 'ies'}"
            )
            warnings.append(
                f"`{split}`: {state} (expected {fraction * whole:.1f} of {whole} at fraction "
                f"{fraction:g}; publish.min_split_trajectories is {min_split_trajectories})"
            )
    return warnings
