"""The card's `Rounds` section: which rounds the dataset holds and what each contributed. Only
a dataset with an online round has it (one offline run's card is as it was)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from builder.publish.card_inputs import CardInputs

PREFIXES = {
    "raw": "raw (offline)",
    "compressed": "compressed by `{}`",
    "deployed": "as a deployed compressor showed them",
}


def rounds_section(inputs: CardInputs) -> str:
    rounds: Sequence[Mapping[str, Any]] = inputs.rounds
    if not rounds:
        return ""
    merged = len(rounds) > 1
    lines = [
        "## Rounds",
        "",
        "Round 0 rows were judged with the raw tool outputs earlier in the agent's context; "
        "rows of an online round (1, 2, ...) in the context a compressor made, so they teach "
        "the compressor about the contexts it meets once deployed. Every row has `round` and "
        "`prefix_mode`.",
    ]
    if merged:
        lines[-1] += (
            f" This dataset merges {len(rounds)} runs; a training row with the same trajectory, "
            "step and target as one of an earlier round is kept once, as the earlier round's."
        )
    lines += [
        "",
        "| round | earlier observations | run config | supervision rows | preference pairs "
        "| candidates | duplicates dropped |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rounds:
        rows, dropped = r.get("rows") or {}, r.get("duplicates") or {}
        prefix = PREFIXES.get(str(r["prefix_mode"]), str(r["prefix_mode"]))
        lines.append(
            f"| {r['round']} | {prefix.format(r.get('prefix_compressor'))} "
            f"| `{r.get('config_hash') or '?'}` | {rows.get('supervision', 0)} "
            f"| {rows.get('preferences', 0)} | {rows.get('candidates', 0)} "
            f"| {sum(dropped.values())} |"
        )
    lines += ["", "Counts are rows before `max_tokens`, the same in every split they fall in."]
    return "\n".join(lines)
