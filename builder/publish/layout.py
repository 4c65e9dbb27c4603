"""Lay out a run's output tables as a Hugging Face dataset folder.

`OUT/supervision` becomes the configs `prompt_completion` (the default) and `sft`,
`OUT/preferences` and `OUT/candidates` the configs of their names, under
`data/<config>/<split>-NNNNN-of-MMMMM.parquet` (config_rows.py writes one config). Each row goes
to the split chosen by a hash of its `trajectory_id` (splits.py), so one trajectory never lands
in two splits and every config agrees. The run's report.json (local paths removed) and the
dataset's own figures (statistics.json) are published next to the card they back.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.errors import PublishError
from builder.publish.card import build_card
from builder.publish.card_inputs import CardInputs, ConfigLayout
from builder.publish.config_rows import ConfigJob, write_config
from builder.publish.folder import (
    copy_plots,
    parquet_files,
    read_json,
    read_text,
    read_yaml,
    swap_in,
)
from builder.publish.folder import iter_folder_files as iter_folder_files
from builder.publish.lengths import make_counter
from builder.publish.licences import licence_fields
from builder.publish.provenance import Provenance
from builder.publish.sources import input_sources
from builder.publish.split_checks import split_warnings
from builder.publish.splits import DEFAULT_SPLITS, check_splits, count_per_split, split_of
from builder.publish.statistics import public_report, statistics
from builder.scrub import Scrubber

CONFIG_TABLES: dict[str, str] = {
    "prompt_completion": "supervision",
    "sft": "supervision",
    "preferences": "preferences",
    "candidates": "candidates",
}
REPORT_NAME = "report.json"
STATISTICS_NAME = "statistics.json"

__all__ = ["DEFAULT_SPLITS", "ConfigLayout", "LayoutSummary", "build_dataset_folder", "split_of"]


@dataclass(slots=True)
class LayoutSummary:
    """The result of `build_dataset_folder`, also the input of the dataset card."""

    dest: Path
    configs: dict[str, ConfigLayout] = field(default_factory=dict)
    split_of_trajectory: dict[str, str] = field(default_factory=dict)
    plots: list[str] = field(default_factory=list)
    redactions: dict[str, int] = field(default_factory=dict)
    empty_configs: list[str] = field(default_factory=list)  # tables present but without rows
    warnings: list[str] = field(default_factory=list)  # e.g. a split too small to be useful

    @property
    def files(self) -> list[str]:
        """Every data file, relative to `dest`, sorted."""
        return sorted(f for c in self.configs.values() for fs in c.files.values() for f in fs)


def build_dataset_folder(
    out_dir: Path,
    dest: Path,
    *,
    splits: Mapping[str, float] = DEFAULT_SPLITS,
    license: str = "unknown",
    license_name: str | None = None,
    license_link: str | None = None,
    scrubber: Scrubber | None = None,
    repo_id: str | None = None,
    target: str | None = None,
    input_licenses: Mapping[str, str] | None = None,
    seed: int = 0,
    max_rows_per_shard: int = 50_000,
    batch_size: int = 1_000,
    tokenizer: str | None = None,
    max_tokens: int | None = None,
    min_train_fraction: float = 0.5,
    min_split_trajectories: int = 5,
    rounds: list[dict[str, Any]] | None = None,
) -> LayoutSummary:
    """Write `dest` (data/, plots/, report.json, statistics.json, README.md) from the run
    output `out_dir`.

    `target` is what the card's snippets load (default: `repo_id`, else the folder's path).
    `tokenizer` (a local Hugging Face tokenizer) counts the lengths with its chat template;
    `max_tokens` leaves out training rows whose whole sequence is longer. The folder is built
    in `dest/.staging` and swapped in at the end, so an interrupted publish never leaves a
    half-written dataset behind the old one.
    """
    splits = check_splits(splits)
    licence_fields(license, license_name, license_link)  # a licence the Hub rejects fails early
    scrubber = scrubber if scrubber is not None else Scrubber()
    sources = {c: out_dir / t for c, t in CONFIG_TABLES.items() if parquet_files(out_dir / t)}
    if not sources:
        tables = ", ".join(dict.fromkeys(CONFIG_TABLES.values()))
        raise PublishError(f"{out_dir}: no Parquet shards under any of {tables}; run the pipeline")
    staging = dest / ".staging"
    shutil.rmtree(staging, ignore_errors=True)
    summary = LayoutSummary(dest=dest)
    before = dict(scrubber.counts)
    resolved = read_yaml(out_dir / "config.resolved.yaml")
    report = read_json(out_dir / REPORT_NAME)
    job = ConfigJob(
        staging, splits, scrubber, summary.split_of_trajectory,
        Provenance(out_dir, resolved, report), make_counter(tokenizer), seed=seed,
        max_tokens=max_tokens, max_rows=max_rows_per_shard, batch_size=batch_size,
    )  # fmt: skip
    try:
        for config, source in sources.items():
            layout = write_config(config, source, job)
            if layout.rows:
                summary.configs[config] = layout
            else:  # `datasets` cannot load a config without rows: leave it out, say so
                summary.empty_configs.append(config)
        if not summary.configs:
            raise PublishError(f"{out_dir}: every table is empty, nothing to publish")
        counts = {k: v - before.get(k, 0) for k, v in scrubber.counts.items()}
        summary.redactions = {k: v for k, v in counts.items() if v}
        summary.plots = copy_plots(out_dir / "plots", staging / "plots")
        published = scrubber.scrub_value(public_report(report))
        if published:
            text = json.dumps(published, indent=2, sort_keys=False) + "\n"
            (staging / REPORT_NAME).write_text(text, encoding="utf-8")
        per_split = count_per_split(summary.split_of_trajectory, splits)
        inputs = CardInputs(
            configs=summary.configs,
            report=published,
            resolved_config=resolved,
            plots=summary.plots,
            license=license,
            license_name=license_name,
            license_link=license_link,
            repo_id=repo_id,
            target=target or repo_id or f"./{dest.name}",  # no local path on the card
            redactions=summary.redactions,
            empty_configs=summary.empty_configs,
            config_hash=read_text(out_dir / "config.hash"),
            data_values=_distinct_values(summary),
            trajectories_per_split=per_split,
            splits=splits,
            seed=seed,
            report_published=bool(published),
            inputs=input_sources(resolved, input_licenses),
            split_warnings=split_warnings(
                summary.configs, per_split, splits, min_train_fraction, min_split_trajectories
            ),
            min_train_fraction=min_train_fraction,
            min_split_trajectories=min_split_trajectories,
            max_tokens=max_tokens,
            rounds=list(rounds or []),
        )
        summary.warnings = list(inputs.split_warnings)
        stats = json.dumps(statistics(inputs), indent=2, sort_keys=False) + "\n"
        (staging / STATISTICS_NAME).write_text(stats, encoding="utf-8")
        (staging / "README.md").write_text(build_card(inputs), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, dest)
    return summary


def _distinct_values(summary: LayoutSummary) -> dict[str, list[str]]:
    values: dict[str, set[str]] = {}
    for layout in summary.configs.values():
        for column, seen in layout.values.items():
            values.setdefault(column, set()).update(seen)
    return {c: sorted(v) for c, v in values.items()}
