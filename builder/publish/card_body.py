"""The markdown body of the dataset card, one function per section (all pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builder.publish.card_inputs import CardInputs, title
from builder.publish.card_method import citation_section, dig, limitations_section, made_section
from builder.publish.card_provenance import provenance_section
from builder.publish.card_rounds import rounds_section
from builder.publish.card_training import lengths_section, trl_lines
from builder.publish.columns import CONFIG_DESCRIPTIONS, column_doc

# The short statistics table: (label, section of report.json, key).
HEADLINE = (
    ("trajectories", "totals", "trajectories"),
    ("trajectories excluded (decontamination)", "decontamination", "excluded_trajectories"),
    ("eligible steps", "totals", "eligible_steps"),
    ("candidates", "totals", "candidates"),
    ("passing candidates", "totals", "passing_candidates"),
    ("selected rows", "totals", "selected_rows"),
    ("fallback rows", "totals", "fallback_rows"),
    ("preference pairs", "totals", "preference_pairs"),
    ("control pass rate", "control", "pass_rate"),
    ("tokens saved on selected steps", "compression", "tokens_saved"),
    ("share of observation tokens saved", "compression", "share_of_observation_tokens_saved"),
)
CONTROL_KEYS = ("pass_rate", "warning", "steps", "reproduced")


def body(inputs: CardInputs) -> str:
    sections = [
        f"# {title(inputs)}\n\n"
        "Training data for **next-action-preserving observation compressors** for LLM coding "
        "agents, built with `nap-builder`: a tool output is compressed only where the agent "
        "still takes the same next action with the compressed text.",
        _configs_section(inputs),
        rounds_section(inputs),
        made_section(inputs),
        _usage_section(inputs),
        lengths_section(inputs),
        _columns_section(inputs),
        _splits_section(inputs),
        provenance_section(inputs),
        _control_section(inputs),
        limitations_section(inputs),
        _redactions_section(inputs),
        _statistics_section(inputs),
        _plots_section(inputs),
        citation_section(inputs),
        _licence_section(inputs),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _configs_section(inputs: CardInputs) -> str:
    splits = _all_splits(inputs)
    lines = ["## Configs and splits", "", "| config | " + " | ".join(splits) + " | |"]
    lines.append("|---" * (len(splits) + 2) + "|")
    for name, layout in inputs.configs.items():
        counts = [str(layout.rows.get(s, 0)) for s in splits]
        description = CONFIG_DESCRIPTIONS.get(name, "")
        lines.append(f"| `{name}` | " + " | ".join(counts) + f" | {description} |")
    default = next((c for c in ("prompt_completion", "sft") if c in inputs.configs), None)
    if default:
        lines += ["", f"`{default}` is the default config."]
    if inputs.empty_configs:
        empty = ", ".join(f"`{c}`" for c in inputs.empty_configs)
        within = f" within max_tokens {inputs.max_tokens}" if inputs.max_tokens else ""
        lines += ["", f"Not included because the run produced no rows for them{within}: {empty}."]
    return "\n".join(lines)


def _columns_section(inputs: CardInputs) -> str:
    lines = ["## Columns"]
    for name, layout in inputs.configs.items():
        lines += ["", f"### `{name}`", "", "| column | type | meaning |", "|---|---|---|"]
        for schema_field in layout.schema:
            doc = column_doc(name, schema_field.name)
            lines.append(f"| `{schema_field.name}` | `{schema_field.type}` | {_cell(doc)} |")
    return "\n".join(lines)


def _all_splits(inputs: CardInputs) -> list[str]:
    seen: dict[str, None] = dict.fromkeys(inputs.splits)
    for layout in inputs.configs.values():
        seen.update(dict.fromkeys(layout.rows))
    return list(seen)


def _splits_section(inputs: CardInputs) -> str:
    fractions = ", ".join(f"{s} {f:g}" for s, f in inputs.splits.items())
    lines = [
        "## Split rule",
        "",
        f"Splits are made by trajectory: a trajectory goes to the split where "
        f"sha256(`{inputs.seed}:<trajectory_id>`) falls on the cumulative fractions "
        f"({fractions or 'as configured'}), so no trajectory is in two splits and every config "
        "agrees. The rule needs no global view of the data, so each split gets about "
        "fraction x trajectories; a split that no trajectory falls into has no file and is "
        "not declared. Small datasets therefore often have no validation or test split: "
        "make one with `train_test_split` on `train` if you need it (by `trajectory_id` to keep "
        "trajectories whole).",
    ]
    per = inputs.trajectories_per_split
    if per:
        total = sum(per.values())
        lines += ["", "| split | fraction | trajectories | expected | |", "|---|---|---|---|---|"]
        for split, count in per.items():
            fraction = inputs.splits.get(split, 0.0)
            note = "not created: no trajectory fell into it" if count == 0 else ""
            lines.append(f"| {split} | {fraction:g} | {count} | {fraction * total:.1f} | {note} |")
    if inputs.split_warnings:
        lines += ["", "**Warnings:**", ""] + [f"- {w}" for w in inputs.split_warnings]
    return "\n".join(lines)


def _control_section(inputs: CardInputs) -> str:
    control = inputs.report.get("control")
    if not isinstance(control, Mapping) or not control:
        return ""
    lines = [
        "## Judge reliability",
        "",
        "Every eligible step is also judged on its raw observation (an `unchanged` control "
        "through the same path). The control's pass rate is how often the agent reproduces "
        "its reference action on the raw context: the ceiling of what any compression can "
        "pass, and a low value means the judge itself is unreliable.",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    keys = [k for k in CONTROL_KEYS if k in control] + [k for k in control if k not in CONTROL_KEYS]
    lines += [f"| {k} | {_fmt(control[k])} |" for k in keys]
    return "\n".join(lines)


def _redactions_section(inputs: CardInputs) -> str:
    run = inputs.report.get("redactions")
    run = run if isinstance(run, Mapping) else {}
    kinds = sorted(set(run) | set(inputs.redactions))
    lines = [
        "## Redactions",
        "",
        "Secrets (API keys, tokens, passwords, private keys, ...) are replaced by "
        "`[REDACTED:<kind>]`: before any text is sent to a model, and again in every published "
        "file.",
        "",
    ]
    if not kinds:
        return "\n".join([*lines, "No secret was found."])
    lines += ["| kind | before model requests | in published files |", "|---|---|---|"]
    lines += [f"| {k} | {run.get(k, 0)} | {inputs.redactions.get(k, 0)} |" for k in kinds]
    return "\n".join(lines)


def _statistics_section(inputs: CardInputs) -> str:
    rows = []
    for label, section, key in HEADLINE:
        value = dig(inputs.report, f"{section}.{key}")
        if value is not None:
            rows.append((label, f"{value:.1%}" if "rate" in label or "share" in label else value))
    if not rows:
        return ""
    where = (
        "[`report.json`](report.json) (the run's figures) and [`statistics.json`]"
        "(statistics.json) (rows, token lengths and splits of this dataset)"
        if inputs.report_published
        else "[`statistics.json`](statistics.json)"
    )
    lines = [
        "## Statistics",
        "",
        f"The headline figures; every figure is in {where}. Tokens saved are, summed over "
        "steps, the raw minus rendered cl100k tokens of each step's best selected row.",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| {label} | {_fmt(value)} |" for label, value in rows]
    return "\n".join(lines)


def _plots_section(inputs: CardInputs) -> str:
    if not inputs.plots:
        return ""
    lines = ["## Plots", ""]
    for plot in inputs.plots:
        name = plot.rsplit("/", 1)[-1].removesuffix(".svg").replace("_", " ")
        lines += [f"### {name}", "", f"![{name}]({plot})", ""]
    return "\n".join(lines).rstrip()


def _usage_section(inputs: CardInputs) -> str:
    target = inputs.target or inputs.repo_id or "ORG/NAME"
    first = next(iter(inputs.configs), "sft")
    lines = [
        "## Usage",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{target}", "{first}")',
        *(f'# or: load_dataset("{target}", "{c}")' for c in list(inputs.configs)[1:]),
        "```",
    ]
    trl = trl_lines(inputs, target)
    if trl:
        lines += [
            "",
            "Training with TRL: `prompt_completion` is conversational prompt/completion, so "
            "SFT puts the loss on the target alone; `max_length` covers the data (see Lengths). "
            "No column needs to be dropped:",
            "",
            "```python",
            "from datasets import load_dataset",
            "from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer",
            "",
            *trl,
            "```",
        ]
    return "\n".join(lines)


def _licence_section(inputs: CardInputs) -> str:
    name = inputs.license_name if inputs.license == "other" else inputs.license
    link = f" ({inputs.license_link})" if inputs.license == "other" and inputs.license_link else ""
    return (
        "## Licence\n\n"
        f"The dataset files are released under `{name}`{link}. The observations and tasks "
        "come from third-party agent trajectories and repositories that carry their own "
        "licences (see Inputs above); check the sources before redistributing or training on "
        "this data."
    )


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if value is None:
        return "n/a"
    return _cell(str(value))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
