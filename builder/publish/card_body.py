"""The markdown body of the dataset card, one function per section (all pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builder.publish.card_inputs import CardInputs, builder_version, title
from builder.publish.columns import CONFIG_DESCRIPTIONS, column_doc

# (label, dotted key in the resolved config, default when the key is absent)
SETTINGS = (
    ("Teacher", "teacher.model", None),
    ("Teacher provider", "teacher.provider", None),
    ("Teacher samples per step", "teacher.samples", None),
    ("Agent", "agent.model", None),
    ("Agent provider", "agent.provider", None),
    ("References mode", "references.mode", None),
    ("Reference samples per step", "references.samples", None),
    ("Gate mode", "gate.mode", "generate"),
    ("Similarity", "gate.similarity", None),
    ("Aggregate", "gate.aggregate", None),
    ("Top k", "gate.top_k", None),
    ("Threshold", "gate.threshold", None),
    ("References that must agree", "gate.min_agree", "auto (1 logged, else 2)"),
    ("Valid references a step needs", "gate.min_references", "auto (1 logged, else half)"),
    ("Selected per step", "selection.max_per_step", None),
    ("Fallback when nothing passes", "selection.fallback", None),
)
CONTROL_KEYS = ("pass_rate", "warning", "steps", "reproduced")


def body(inputs: CardInputs) -> str:
    sections = [
        f"# {title(inputs)}\n\n"
        "Training data for **next-action-preserving observation compressors** for LLM coding "
        "agents, built with `nap-builder`: a tool output is compressed only where the agent "
        "still takes the same next action with the compressed text.",
        _configs_section(inputs),
        _columns_section(inputs),
        _splits_section(inputs),
        _provenance_section(inputs),
        _control_section(inputs),
        _redactions_section(inputs),
        _statistics_section(inputs),
        _plots_section(inputs),
        _usage_section(inputs),
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
    if inputs.empty_configs:
        empty = ", ".join(f"`{c}`" for c in inputs.empty_configs)
        lines += ["", f"Not included because the run produced no rows for them: {empty}."]
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
    return "\n".join(lines)


def _provenance_section(inputs: CardInputs) -> str:
    cfg, report, seen = inputs.resolved_config, inputs.report, inputs.data_values
    lines = ["## Provenance", "", "### Inputs", ""]
    if inputs.inputs:
        lines += ["| input | licence | licence from |", "|---|---|---|"]
        for source in inputs.inputs:
            licence = f"`{source.license}`" if source.license else "unknown: check the source"
            lines.append(f"| `{_cell(source.path)}` | {licence} | {source.where} |")
    else:
        lines.append("The run's inputs are not recorded (no `config.resolved.yaml`).")
    lines += ["", "### Settings", ""]
    items: dict[str, Any] = {}
    for label, dotted, default in SETTINGS:
        value = _dig(cfg, dotted)
        items[label] = default if value is None and cfg else value
    items["Teacher"] = _joined(seen.get("teacher_model")) or items["Teacher"]
    items["Agent"] = _joined(seen.get("agent_model")) or items["Agent"]
    items["Prompt version"] = _joined(seen.get("prompt_version")) or report.get("prompt_version")
    items["Config hash"] = inputs.config_hash or report.get("config_hash")
    items["Builder version"] = inputs.builder_version or builder_version()
    lines += [f"- **{k}**: `{v}`" for k, v in items.items() if v not in (None, "")]
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
    rows = [(k, v) for k, v in _flatten(inputs.report) if not k.startswith("redactions.")]
    if not rows:
        return ""
    source = "`report.json` (published next to this card)" if inputs.report_published else "the run"
    lines = [
        "## Statistics",
        "",
        f"Every figure of {source}. `compression.tokens_saved` is, summed over steps, the raw "
        "minus rendered tokens of each step's best selected row (rank 0, the shortest passing "
        "candidate; fallback rows save nothing): the same figure as the run's progress line.",
        "",
        "| metric | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in rows]
    return "\n".join(lines)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += _flatten(value, name + ".")
        elif isinstance(value, list):
            out.append((name, ", ".join(_fmt(v) for v in value)))
        else:
            out.append((name, value))
    return out


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
    trl = []
    if "sft" in inputs.configs:
        trl += [
            f'sft = load_dataset("{target}", "sft", split="train")  # conversational `messages`',
            'SFTTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", train_dataset=sft,',
            '           args=SFTConfig(output_dir="compressor-sft")).train()',
        ]
    if "preferences" in inputs.configs:
        trl += [
            f'pairs = load_dataset("{target}", "preferences", split="train")  # prompt/chosen/'
            "rejected",
            'DPOTrainer(model="compressor-sft", train_dataset=pairs,',
            '           args=DPOConfig(output_dir="compressor-dpo")).train()',
        ]
    if trl:
        lines += [
            "",
            "Training with TRL (the configs are in TRL's conversational formats; no column "
            "needs to be dropped):",
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


def _joined(values: list[str] | None) -> str | None:
    return ", ".join(values) if values else None


def _dig(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if value is None:
        return "n/a"
    return _cell(str(value))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
