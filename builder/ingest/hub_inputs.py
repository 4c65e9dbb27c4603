"""Hub datasets named as inputs: `ID[:SPLIT]`, which column holds what (`--column role=NAME`),
and presets for the column layouts of known Hub trajectory datasets.

A preset is chosen by `--preset NAME` (or `preset:` in `inputs`), else by the Hub id, else, for
a local copy, by the columns of its first row (`preset_by_columns`); columns given by hand win
over the preset's. The layouts below come from each dataset's card and viewer on the Hub.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from builder.errors import ConfigError

COLUMN_ROLES = {
    "messages": "the column with the message list (a list, or its JSON text)",
    "id": "the task instance id (default `instance_id`)",
    "model": "the agent model's name",
    "resolved": "whether the run solved its task (a bool, or 0/1)",
    "tools": "the tool schemas the agent had (default `tools`)",
    "role_key": "the key of a message's role inside each message (default `role`)",
    "content_key": "the key of a message's text inside each message (default `content`)",
}
_SPLIT = re.compile(r"^(?P<ref>.+):(?P<split>[A-Za-z0-9_.\-]+)$")


@dataclass(frozen=True)
class Preset:
    """The column layout of one known Hub trajectory dataset."""

    name: str
    hub_ids: tuple[str, ...]
    columns: dict[str, str]
    signature: frozenset[str]  # columns that tell a local copy of this layout apart
    source: str = ""
    about: str = field(default="", compare=False)


PRESETS = (
    Preset(
        "swe-smith",
        ("SWE-bench/SWE-smith-trajectories",),
        {"messages": "messages", "id": "instance_id", "model": "model", "resolved": "resolved"},
        frozenset({"messages", "instance_id", "resolved", "traj_id"}),
        "https://huggingface.co/datasets/SWE-bench/SWE-smith-trajectories",
        "SWE-agent runs; `messages` is the message list as JSON text",
    ),
    Preset(
        "swe-rebench-openhands",
        ("nebius/SWE-rebench-openhands-trajectories",),
        {"messages": "trajectory", "id": "instance_id", "resolved": "resolved", "tools": "tools"},
        frozenset({"trajectory", "trajectory_id", "instance_id", "tools"}),
        "https://huggingface.co/datasets/nebius/SWE-rebench-openhands-trajectories",
        "OpenHands runs; `trajectory` holds OpenAI messages with tool calls, `resolved` is 0/1",
    ),
    Preset(
        "swe-agent-trajectories",
        ("nebius/SWE-agent-trajectories",),
        {
            "messages": "trajectory",
            "id": "instance_id",
            "model": "model_name",
            "resolved": "target",
            "content_key": "text",
        },
        frozenset({"trajectory", "model_name", "target"}),
        "https://huggingface.co/datasets/nebius/SWE-agent-trajectories",
        "SWE-agent runs; messages are `{role, text}` with roles system / user / ai",
    ),
    Preset(
        "open-swe-traces",
        ("nvidia/Open-SWE-Traces", "nvidia/open-swe-traces"),
        {"messages": "messages", "id": "instance_id", "resolved": "resolved", "tools": "tools"},
        frozenset({"messages", "trajectory_id", "tools", "hf_dataset_name"}),
        "https://huggingface.co/datasets/nvidia/open-swe-traces",
        "OpenHands runs; `tools` is a list of JSON texts",
    ),
)


def split_ref(text: str) -> tuple[str, str | None]:
    """`ID[:SPLIT]` → (id or path, split); a colon followed by a path is not a split."""
    match = _SPLIT.match(text)
    return (match["ref"], match["split"]) if match else (text, None)


def parse_columns(values: Iterable[str]) -> dict[str, str]:
    """`role=NAME` pairs (`--column`), each role one of `COLUMN_ROLES`."""
    columns: dict[str, str] = {}
    for value in values:
        role, sep, name = value.partition("=")
        if not sep or not name:
            raise ConfigError(f"--column {value!r}: write ROLE=NAME, e.g. messages=trajectory")
        columns[role.strip()] = name.strip()
    check_columns(columns)
    return columns


def check_columns(columns: Mapping[str, Any]) -> None:
    unknown = sorted(set(columns) - set(COLUMN_ROLES))
    if unknown:
        raise ConfigError(f"unknown column role(s) {unknown}; roles: {', '.join(COLUMN_ROLES)}")
    bad = [k for k, v in columns.items() if not isinstance(v, str) or not v]
    if bad:
        raise ConfigError(f"column role(s) {bad} need a column name (a string)")


def preset_named(name: str) -> Preset:
    for preset in PRESETS:
        if preset.name == name:
            return preset
    names = ", ".join(p.name for p in PRESETS)
    raise ConfigError(f"unknown preset {name!r}; presets: {names}")


def preset_for_hub_id(ref: str) -> Preset | None:
    lowered = ref.lower()
    return next((p for p in PRESETS if lowered in (h.lower() for h in p.hub_ids)), None)


def preset_by_columns(columns: Iterable[str]) -> Preset | None:
    """The preset whose signature columns a dataset has (the most specific one)."""
    present = set(columns)
    fitting = [p for p in PRESETS if p.signature <= present]
    return max(fitting, key=lambda p: len(p.signature), default=None)


def dataset_options(
    ref: str, split: str | None, columns: Mapping[str, str], preset: str | None
) -> dict[str, Any]:
    """The adapter options of one Hub dataset input (`hf_dataset.HfDatasetAdapter`)."""
    check_columns(columns)
    chosen = preset_named(preset) if preset else preset_for_hub_id(ref)
    options: dict[str, Any] = {}
    if chosen is not None:
        options.update(chosen.columns)
        options["preset"] = chosen.name
    options.update(columns)
    if split:
        options["split"] = split
    return options


def mapping_options(options: Mapping[str, Any], first_row: Mapping[str, Any]) -> dict[str, Any]:
    """Options for a dataset read without a preset or a `messages` column: the preset its
    columns match, under what was given by hand."""
    if "preset" in options or "messages" in options:
        return dict(options)
    found = preset_by_columns(first_row)
    if found is None:
        return dict(options)
    return {**found.columns, "preset": found.name, **options}
