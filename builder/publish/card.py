"""The dataset card (README.md): a YAML header the Hub and `datasets` read, and a body for people.

Pure: everything it shows comes in through `CardInputs`. The body's sections are in
card_body.py; the column meanings in columns.py; the licence checks in licences.py.
"""

from __future__ import annotations

from typing import Any

import yaml

from builder.publish.card_body import body
from builder.publish.card_inputs import CardInputs, title
from builder.publish.licences import licence_fields

SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]


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
    default = next((c for c in ("prompt_completion", "sft") if c in inputs.configs), None)
    configs, infos = [], []
    for name, layout in inputs.configs.items():
        split_names = list(layout.rows)
        configs.append(
            {
                "config_name": name,
                "data_files": [
                    {"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in split_names
                ],
                **({"default": True} if name == default else {}),
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
    header = yaml.safe_dump(card_header(inputs), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n\n{body(inputs)}"
