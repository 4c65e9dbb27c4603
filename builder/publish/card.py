"""The dataset card (README.md): a YAML header the Hub and `datasets` read, and a body for people.

Pure: everything it shows comes in through `CardInputs`. The body's sections are in
card_body.py; the column meanings in columns.py; the licence checks in licences.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from builder.publish.licences import licence_fields

if TYPE_CHECKING:
    from builder.publish.layout import ConfigLayout
    from builder.publish.sources import InputSource

SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]


@dataclass(frozen=True, slots=True)
class CardInputs:
    configs: Mapping[str, ConfigLayout]
    report: Mapping[str, Any] = field(default_factory=dict)
    resolved_config: Mapping[str, Any] = field(default_factory=dict)
    plots: list[str] = field(default_factory=list)
    license: str = "unknown"
    license_name: str | None = None  # with license `other`
    license_link: str | None = None
    repo_id: str | None = None
    target: str | None = None  # what the snippets load: the repo id or the folder's path
    redactions: Mapping[str, int] = field(default_factory=dict)  # in the published files
    trajectories_per_split: Mapping[str, int] = field(default_factory=dict)
    splits: Mapping[str, float] = field(default_factory=dict)  # configured fractions
    seed: int = 0
    empty_configs: list[str] = field(default_factory=list)
    config_hash: str | None = None  # OUT/config.hash, written by the run
    data_values: Mapping[str, list[str]] = field(default_factory=dict)  # e.g. prompt_version
    inputs: list[InputSource] = field(default_factory=list)
    report_published: bool = False  # report.json sits next to the card
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
        **licence_fields(inputs.license, inputs.license_name, inputs.license_link),
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["code", "agents", "observation-compression", "swe", "synthetic", "nap-builder"],
        "size_categories": [size_category(largest)],
        "pretty_name": title(inputs),
        "configs": configs,
        "dataset_info": infos,
    }


def build_card(inputs: CardInputs) -> str:
    """README.md text: `---` YAML header `---` then the markdown body."""
    from builder.publish.card_body import body

    header = yaml.safe_dump(card_header(inputs), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n\n{body(inputs)}"


def title(inputs: CardInputs) -> str:
    return (
        inputs.repo_id.split("/")[-1] if inputs.repo_id else "nap-builder observation compression"
    )
