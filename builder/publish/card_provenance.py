"""The card's provenance section: inputs by name and licence, every setting that shaped the
rows, and decontamination (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builder.publish.card_inputs import CardInputs, builder_version
from builder.publish.card_method import dig

# (label, dotted key in the resolved config, default when the key is absent)
SETTINGS = (
    ("Teacher", "teacher.model", None),
    ("Teacher provider", "teacher.provider", None),
    ("Teacher samples per step", "teacher.samples", None),
    ("Teacher temperature", "teacher.temperature", None),
    ("Rule candidates", "teacher.rules", None),
    ("Agent", "agent.model", None),
    ("Agent provider", "agent.provider", None),
    ("References mode", "references.mode", None),
    ("Reference samples per step", "references.samples", None),
    ("Reference temperature", "references.temperature", None),
    ("Eligibility: min tokens (cl100k, line-numbered)", "eligibility.min_tokens", None),
    ("Eligibility: require focus question", "eligibility.require_focus", None),
    ("Eligibility: max observation chars", "eligibility.max_observation_chars", None),
    ("Gate mode", "gate.mode", "generate"),
    ("Similarity", "gate.similarity", None),
    ("Aggregate", "gate.aggregate", None),
    ("Top k", "gate.top_k", None),
    ("Threshold", "gate.threshold", None),
    ("References that must agree", "gate.min_agree", "auto (1 logged, else 2)"),
    ("Valid references a step needs", "gate.min_references", "auto (1 logged, else half)"),
    ("Selected per step", "selection.max_per_step", None),
    ("Fallback when nothing passes", "selection.fallback", None),
    ("Judge every candidate", "selection.exhaustive", None),
    ("Preference pairs per step", "selection.max_preference_pairs", None),
    ("Secret scrubbing", "scrub.enabled", None),
)


def provenance_section(inputs: CardInputs) -> str:
    cfg, report, seen = inputs.resolved_config, inputs.report, inputs.data_values
    lines = ["## Provenance", "", "### Inputs", ""]
    if inputs.inputs:
        lines += ["| input | licence | licence from |", "|---|---|---|"]
        for source in inputs.inputs:
            licence = f"`{source.license}`" if source.license else "unknown: check the source"
            lines.append(f"| `{_cell(input_name(source.path))}` | {licence} | {source.where} |")
    else:
        lines.append("The run's inputs are not recorded (no `config.resolved.yaml`).")
    lines += ["", "### Settings", ""]
    items: dict[str, Any] = {}
    for label, dotted, default in SETTINGS:
        value = dig(cfg, dotted)
        items[label] = default if value is None and cfg else value
    items["Teacher"] = _joined(seen.get("teacher_model")) or items["Teacher"]
    items["Agent"] = _joined(seen.get("agent_model")) or items["Agent"]
    items["Prompt version"] = _joined(seen.get("prompt_version")) or report.get("prompt_version")
    items["Config hash"] = inputs.config_hash or report.get("config_hash")
    if inputs.max_tokens is not None:
        items["Publish max tokens"] = inputs.max_tokens
    items["Builder version"] = inputs.builder_version or builder_version()
    lines += [f"- **{k}**: `{_setting(v)}`" for k, v in items.items() if v not in (None, "", [])]
    lines += ["", *_decontamination_lines(inputs)]
    return "\n".join(lines)


def _setting(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def input_name(path: str) -> str:
    """An input as the card names it: a local path by its last component (no local folders),
    a Hub id or URI as written."""
    if path.startswith("/"):
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return name + "/" if path.endswith("/") or "." not in name else name
    return path


def _decontamination_lines(inputs: CardInputs) -> list[str]:
    section = inputs.report.get("decontamination")
    section = section if isinstance(section, Mapping) else {}
    lines = [
        "### Decontamination",
        "",
        "Every row has `instance_id` (the task instance, where the trajectory's format records "
        "one), `harness`, `source_format`, `source_file` and `trajectory_model`, so rows of an "
        "evaluation instance can be found and dropped.",
        "",
    ]
    if not section:
        return [*lines, "The run recorded no decontamination figures."]
    lines.append(
        f"- **exclude_instances**: {section.get('exclude_instances', 'none')}: "
        f"{section.get('excluded_trajectories', 0)} trajectories of "
        f"{section.get('excluded_instances', 0)} instances dropped before any model request"
    )
    for name, label in (
        ("swe-bench-verified", "SWE-bench Verified"),
        ("swe-bench-lite", "SWE-bench Lite"),
    ):
        kept = section.get(f"kept_{name}_instances")
        if kept is not None:
            lines.append(f"- **{label} instances in this data**: {kept}")
    if section.get("warning"):
        lines += ["", f"**Warning:** {section['warning']}."]
    return lines


def _joined(values: list[str] | None) -> str | None:
    return ", ".join(values) if values else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
