"""The dataset card (README.md): a YAML header the Hub and `datasets` read, and a body for people.

Pure: everything it shows comes in through `CardInputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from builder.publish.layout import ConfigLayout

CONFIG_DESCRIPTIONS = {
    "sft": "Selected compressor targets (system, prompt, target; chat `messages`), for SFT.",
    "preferences": "Chosen (passing) vs rejected (failing) compressions of the same step.",
    "candidates": "Every teacher candidate with its parse, rendering and gate outcome.",
}
SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]
MAX_STAT_ROWS = 80


@dataclass(frozen=True, slots=True)
class CardInputs:
    configs: Mapping[str, ConfigLayout]
    report: Mapping[str, Any] = field(default_factory=dict)
    resolved_config: Mapping[str, Any] = field(default_factory=dict)
    plots: list[str] = field(default_factory=list)
    license: str = "mit"
    repo_id: str | None = None
    redactions: Mapping[str, int] = field(default_factory=dict)
    trajectories_per_split: Mapping[str, int] = field(default_factory=dict)
    empty_configs: list[str] = field(default_factory=list)
    config_hash: str | None = None  # OUT/config.hash, written by the run
    data_values: Mapping[str, list[str]] = field(default_factory=dict)  # e.g. prompt_version
    builder_version: str | None = None


def builder_version() -> str:
    """`builder.__version__` if set, else the installed distribution's version."""
    import builder

    version = getattr(builder, "__version__", None)
    if isinstance(version, str):
        return version
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("nap-builder")
    except PackageNotFoundError:
        return "unknown"


def size_category(rows: int) -> str:
    """The Hub's `size_categories` bucket for a row count."""
    for limit, name in SIZE_CATEGORIES:
        if rows < limit:
            return name
    return "n>1B"


def card_header(inputs: CardInputs) -> dict[str, Any]:
    """The YAML metadata: licence, task, size, and every config with its splits and features."""
    from datasets import Features

    largest = max((sum(c.rows.values()) for c in inputs.configs.values()), default=0)
    configs, infos = [], []
    for name, layout in inputs.configs.items():
        split_names = list(layout.rows)
        configs.append(
            {
                "config_name": name,
                "data_files": [
                    {"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in split_names
                ],
                **({"default": True} if name == "sft" else {}),
            }
        )
        infos.append(
            {
                "config_name": name,
                "features": Features.from_arrow_schema(layout.schema)._to_yaml_list(),
                "splits": [
                    {
                        "name": s,
                        "num_bytes": layout.num_bytes.get(s, 0),
                        "num_examples": layout.rows[s],
                    }
                    for s in split_names
                ],
            }
        )
    return {
        "license": inputs.license,
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["code", "agents", "observation-compression", "swe", "synthetic", "nap-builder"],
        "size_categories": [size_category(largest)],
        "pretty_name": _title(inputs),
        "configs": configs,
        "dataset_info": infos,
    }


def build_card(inputs: CardInputs) -> str:
    """README.md text: `---` YAML header `---` then the markdown body."""
    header = yaml.safe_dump(card_header(inputs), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n\n{_body(inputs)}"


def _title(inputs: CardInputs) -> str:
    return (
        inputs.repo_id.split("/")[-1] if inputs.repo_id else "nap-builder observation compression"
    )


def _body(inputs: CardInputs) -> str:
    sections = [
        f"# {_title(inputs)}\n\n"
        "Training data for **next-action-preserving observation compressors** for LLM coding "
        "agents, built with `nap-builder`: a tool output is compressed only where the agent "
        "still takes the same next action with the compressed text.",
        _configs_section(inputs),
        _provenance_section(inputs),
        _statistics_section(inputs),
        _plots_section(inputs),
        _usage_section(inputs),
        _licence_section(inputs),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _configs_section(inputs: CardInputs) -> str:
    lines = ["## Configs and splits", "", "| config | " + " | ".join(_all_splits(inputs)) + " | |"]
    lines.append("|---" * (len(_all_splits(inputs)) + 2) + "|")
    for name, layout in inputs.configs.items():
        counts = [str(layout.rows.get(s, 0)) for s in _all_splits(inputs)]
        lines.append(
            f"| `{name}` | " + " | ".join(counts) + f" | {CONFIG_DESCRIPTIONS.get(name, '')} |"
        )
    if inputs.trajectories_per_split:
        per = ", ".join(f"{s}: {n}" for s, n in inputs.trajectories_per_split.items())
        lines += ["", f"Splits are made by trajectory (no trajectory in two splits): {per}."]
    if inputs.empty_configs:
        empty = ", ".join(f"`{c}`" for c in inputs.empty_configs)
        lines += ["", f"Not included because the run produced no rows for them: {empty}."]
    return "\n".join(lines)


def _all_splits(inputs: CardInputs) -> list[str]:
    seen: dict[str, None] = {}
    for layout in inputs.configs.values():
        seen.update(dict.fromkeys(layout.rows))
    return list(seen)


def _provenance_section(inputs: CardInputs) -> str:
    cfg, report, seen = inputs.resolved_config, inputs.report, inputs.data_values
    items = {
        "Teacher model": _joined(seen.get("teacher_model")) or _dig(cfg, "teacher.model"),
        "Agent model": _joined(seen.get("agent_model")) or _dig(cfg, "agent.model"),
        "Prompt version": _joined(seen.get("prompt_version")) or report.get("prompt_version"),
        "Config hash": inputs.config_hash or report.get("config_hash"),
        "Builder version": inputs.builder_version or builder_version(),
    }
    lines = ["## Provenance", ""]
    lines += [f"- **{k}**: `{v}`" for k, v in items.items() if v not in (None, "")]
    return "\n".join(lines)


def _joined(values: list[str] | None) -> str | None:
    return ", ".join(values) if values else None


def _dig(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _statistics_section(inputs: CardInputs) -> str:
    rows = list(_flatten(inputs.report))
    rows += [(f"published_redactions.{k}", v) for k, v in sorted(inputs.redactions.items())]
    if not rows:
        return ""
    lines = ["## Statistics", "", "| metric | value |", "|---|---|"]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in rows[:MAX_STAT_ROWS]]
    if len(rows) > MAX_STAT_ROWS:
        lines.append(f"| … | {len(rows) - MAX_STAT_ROWS} more in the run's report.json |")
    if inputs.redactions:
        lines += ["", "Secrets were redacted before publishing as `[REDACTED:<kind>]`."]
    return "\n".join(lines)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += _flatten(value, name + ".")
        elif isinstance(value, str | int | float | bool) or value is None:
            out.append((name, value))
    return out


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _plots_section(inputs: CardInputs) -> str:
    if not inputs.plots:
        return ""
    lines = ["## Plots", ""]
    for plot in inputs.plots:
        title = plot.rsplit("/", 1)[-1].removesuffix(".png").replace("_", " ")
        lines += [f"### {title}", "", f"![{title}]({plot})", ""]
    return "\n".join(lines).rstrip()


def _usage_section(inputs: CardInputs) -> str:
    repo = inputs.repo_id or "ORG/NAME"
    first = next(iter(inputs.configs), "sft")
    return (
        "## Usage\n\n```python\nfrom datasets import load_dataset\n\n"
        f'ds = load_dataset("{repo}", "{first}")\n'
        + "".join(f'# or: load_dataset("{repo}", "{c}")\n' for c in list(inputs.configs)[1:])
        + "```"
    )


def _licence_section(inputs: CardInputs) -> str:
    return (
        "## Licence\n\n"
        f"The dataset files are released under `{inputs.license}`. The observations and tasks "
        "come from third-party agent trajectories and repositories that carry their own "
        "licences; check the sources before redistributing or training on this data."
    )
