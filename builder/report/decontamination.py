"""The report's `decontamination` section: what `exclude_instances` dropped at ingest, and the
kept trajectories that belong to an instance of a shipped evaluation set (a warning)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from builder.ingest.instances import NAMED_SETS

SUMMARY_FILE = "ingest_summary.json"


def decontamination_section(out_dir: Path) -> dict[str, Any]:
    """Figures from OUT/ingest_summary.json and the exclusion settings of the resolved config
    (file names only: the card must not carry local paths)."""
    try:
        summary = json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = {}
    excluded = summary.get("excluded_instances") or {}
    watched = summary.get("watched_instances") or {}
    section: dict[str, Any] = {
        "exclude_instances": _settings(out_dir),
        "excluded_trajectories": int((summary.get("total") or {}).get("excluded", 0)),
        "excluded_instances": len(excluded),
    }
    for name in NAMED_SETS:
        section[f"kept_{name}_instances"] = len(watched.get(name) or [])
    section["warning"] = watched_warning(watched)
    return section


def watched_warning(watched: dict[str, list[str]]) -> str | None:
    """One sentence naming the evaluation sets whose instances the data still holds."""
    parts = [
        f"{len(ids)} {NAMED_SETS[name]} instance(s) (e.g. {', '.join(sorted(ids)[:3])})"
        for name, ids in sorted(watched.items())
        if ids and name in NAMED_SETS
    ]
    if not parts:
        return None
    return (
        "the data holds trajectories of " + "; ".join(parts) + ": a compressor trained on them "
        "is contaminated for those benchmarks; set `exclude_instances` to drop them"
    )


def _settings(out_dir: Path) -> str:
    path = out_dir / "config.resolved.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, yaml.YAMLError):
        raw = {}
    spec = (raw or {}).get("exclude_instances") or {}
    if not isinstance(spec, dict):
        return "unknown"
    parts = [f"set {s}" for s in spec.get("sets") or []]
    parts += [f"file {Path(str(f)).name}" for f in spec.get("files") or []]
    if spec.get("ids"):
        parts.append(f"{len(spec['ids'])} listed id(s)")
    return ", ".join(parts) or "none"
