"""What the dataset card shows, gathered by the layout: `CardInputs` and the per-config
`ConfigLayout` it holds, with the version and title every section shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from builder.publish.sources import InputSource


@dataclass(frozen=True, slots=True)
class ConfigLayout:
    """What was written for one config: its Arrow schema and row count per split."""

    name: str
    schema: pa.Schema
    rows: dict[str, int]
    files: dict[str, list[str]]  # split -> paths relative to the dataset folder
    num_bytes: dict[str, int] = field(default_factory=dict)  # split -> Arrow in-memory bytes
    values: dict[str, list[str]] = field(default_factory=dict)  # PROVENANCE_COLUMNS seen
    lengths: dict[str, Any] = field(default_factory=dict)  # token lengths (training configs)


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
    split_warnings: list[str] = field(default_factory=list)
    min_train_fraction: float = 0.5
    min_split_trajectories: int = 5
    max_tokens: int | None = None  # rows with a longer sequence were left out
    rounds: list[dict[str, Any]] = field(default_factory=list)  # `merge_runs.RunRound`s


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


def title(inputs: CardInputs) -> str:
    return (
        inputs.repo_id.split("/")[-1] if inputs.repo_id else "nap-builder observation compression"
    )
