"""The figures published beside the card: the run's report without local paths, and the
dataset's own statistics (rows, token lengths, splits, decontamination) as `statistics.json`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from builder.publish.card_inputs import CardInputs

PATH_KEYS = ("out_dir",)  # the run folder's location says nothing about the data


def public_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """report.json for the public: no key naming a local folder, and any absolute path in a
    value reduced to its last component."""
    return _clean(report) if report else {}


def _clean(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if k not in PATH_KEYS}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, str) and value.startswith("/") and "\n" not in value:
        return PurePath(value).name
    return value


def statistics(inputs: CardInputs) -> dict[str, Any]:
    """Every figure the card summarises, as data."""
    return {
        "configs": {
            name: {
                "rows": dict(layout.rows),
                "bytes": dict(layout.num_bytes),
                **({"lengths": layout.lengths} if layout.lengths else {}),
            }
            for name, layout in inputs.configs.items()
        },
        "empty_configs": list(inputs.empty_configs),
        "splits": {
            "fractions": dict(inputs.splits),
            "seed": inputs.seed,
            "trajectories": dict(inputs.trajectories_per_split),
            "warnings": list(inputs.split_warnings),
        },
        "max_tokens": inputs.max_tokens,
        "decontamination": dict(inputs.report.get("decontamination") or {}),
        "control": dict(inputs.report.get("control") or {}),
        "totals": dict(inputs.report.get("totals") or {}),
        "redactions_in_published_files": dict(inputs.redactions),
        **({"rounds": list(inputs.rounds)} if inputs.rounds else {}),
    }
