"""The card's training section: token lengths per config and TRL snippets whose `max_length`
covers the data (pure)."""

from __future__ import annotations

from typing import Any

from builder.publish.card_inputs import CardInputs
from builder.publish.lengths import TRL_DEFAULT_MAX_LENGTH


def lengths_section(inputs: CardInputs) -> str:
    measured = {n: c.lengths for n, c in inputs.configs.items() if c.lengths}
    if not measured:
        return ""
    tokenizer = next(iter(measured.values())).get("tokenizer", "n/a")
    lines = [
        "## Lengths",
        "",
        f"Tokens per row with **{tokenizer}**, in the columns `prompt_length`, "
        "`completion_length` (or `chosen_length` / `rejected_length`) and `sequence_length` "
        "(prompt and completion together; for preferences, with the longer of the two answers). "
        "`max_length` is what the snippets below set: it covers every row"
        + ("" if _exact(measured) else " with a 25% margin for a model's own tokenizer")
        + f" (TRL's default, {TRL_DEFAULT_MAX_LENGTH}, keeps the start and cuts the target "
        "off longer rows).",
        "",
        "| config | rows | p50 | p95 | p99 | max | over 1024 | max_length | left out |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, facts in measured.items():
        seq = facts.get("sequence") or {}
        figures = [seq.get(k, "") for k in ("rows", "p50", "p95", "p99", "max")]
        figures += [facts.get("rows_over_trl_default", 0), facts.get("max_length")]
        figures.append(_left_out(facts, facts.get("rows_over") or 0))
        lines.append(f"| `{name}` | " + " | ".join(map(str, figures)) + " |")
    if inputs.max_tokens is not None:
        dropped = {n: f.get("dropped_by_max_tokens") or {} for n, f in measured.items()}
        parts = [
            f"`{n}` " + ", ".join(f"{s} {k}" for s, k in d.items()) for n, d in dropped.items() if d
        ]
        lines += [
            "",
            f"Published with `--max-tokens {inputs.max_tokens}`: rows whose sequence is longer "
            "were left out" + (f" ({'; '.join(parts)})." if parts else " (none was)."),
        ]
    return "\n".join(lines)


def _exact(measured: dict[str, Any]) -> bool:
    return bool(next(iter(measured.values())).get("exact"))


def _left_out(facts: dict[str, Any], rows: int) -> str:
    above = facts.get("filter_above")
    return f"{rows} (sequence_length > {above})" if above is not None else "0"


def trl_lines(inputs: CardInputs, target: str) -> list[str]:
    """The TRL recipe: prompt/completion SFT (loss on the target only) and DPO."""
    lines: list[str] = []
    sft_name = next((c for c in ("prompt_completion", "sft") if c in inputs.configs), None)
    if sft_name:
        facts = inputs.configs[sft_name].lengths
        lines += [
            f'train = load_dataset("{target}", "{sft_name}", split="train")',
            *_filter_line(facts, "train"),
            'SFTTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", train_dataset=train,',
            f'           args=SFTConfig(output_dir="compressor-sft"{_max_length(facts)})).train()',
        ]
    if "preferences" in inputs.configs:
        facts = inputs.configs["preferences"].lengths
        lines += [
            f'pairs = load_dataset("{target}", "preferences", split="train")',
            *_filter_line(facts, "pairs"),
            'DPOTrainer(model="compressor-sft", train_dataset=pairs,',
            f'           args=DPOConfig(output_dir="compressor-dpo"{_max_length(facts)})).train()',
        ]
    return lines


def _max_length(facts: dict[str, Any]) -> str:
    return f", max_length={facts['max_length']}" if facts.get("max_length") else ""


def _filter_line(facts: dict[str, Any], name: str) -> list[str]:
    above = facts.get("filter_above")
    if above is None:
        return []
    return [
        f'{name} = {name}.filter(lambda row: row["sequence_length"] <= {above})  '
        f"# leaves out {facts.get('rows_over', 0)} longer rows"
    ]
