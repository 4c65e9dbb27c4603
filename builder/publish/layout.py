"""Lay out a run's output tables as a Hugging Face dataset folder.

`OUT/supervision`, `OUT/preferences` and `OUT/candidates` (folders of Parquet shards) become the
configs `sft`, `preferences` and `candidates` under `data/<config>/<split>-NNNNN-of-MMMMM.parquet`.
Rows are streamed batch by batch, text is scrubbed of secrets, each batch is put in the shape
trainers expect (shapes.py), and each row goes to the split chosen by a hash of its
`trajectory_id` (splits.py), so one trajectory never lands in two splits and every config agrees.
The run's report.json is published too (scrubbed), next to the card it backs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from builder.errors import PublishError
from builder.publish.card import build_card
from builder.publish.card_inputs import CardInputs, ConfigLayout
from builder.publish.folder import (
    copy_plots,
    parquet_files,
    read_json,
    read_text,
    read_yaml,
    swap_in,
)
from builder.publish.folder import iter_folder_files as iter_folder_files
from builder.publish.licences import licence_fields
from builder.publish.shapes import reshape, reshaped_schema
from builder.publish.sources import input_sources
from builder.publish.splits import DEFAULT_SPLITS, check_splits, count_per_split, split_of
from builder.publish.writer import ShardWriter, scrub_batch
from builder.scrub import Scrubber

CONFIG_TABLES: dict[str, str] = {
    "sft": "supervision",
    "preferences": "preferences",
    "candidates": "candidates",
}
ID_COLUMN = "trajectory_id"
# Columns whose distinct values the card reports when a table has them.
PROVENANCE_COLUMNS = ("prompt_version", "teacher_model", "agent_model")
REPORT_NAME = "report.json"

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
) -> LayoutSummary:
    """Write `dest` (data/, plots/, report.json, README.md) from the run output `out_dir`.

    `target` is what the card's snippets load (default: `repo_id`, else the folder's path).
    The folder is built in `dest/.staging` and swapped in at the end, so an interrupted
    publish never leaves a half-written dataset behind the old one.
    """
    splits = check_splits(splits)
    licence_fields(license, license_name, license_link)  # a licence the Hub rejects fails early
    scrubber = scrubber if scrubber is not None else Scrubber()
    sources = {c: out_dir / t for c, t in CONFIG_TABLES.items() if parquet_files(out_dir / t)}
    if not sources:
        tables = ", ".join(CONFIG_TABLES.values())
        raise PublishError(f"{out_dir}: no Parquet shards under any of {tables}; run the pipeline")
    staging = dest / ".staging"
    shutil.rmtree(staging, ignore_errors=True)
    summary = LayoutSummary(dest=dest)
    before = dict(scrubber.counts)
    try:
        for config, source in sources.items():
            layout = _write_config(
                config, source, staging, splits, scrubber, summary.split_of_trajectory,
                seed=seed, max_rows=max_rows_per_shard, batch_size=batch_size,
            )  # fmt: skip
            if layout.rows:
                summary.configs[config] = layout
            else:  # `datasets` cannot load a config without rows: leave it out, say so
                summary.empty_configs.append(config)
        if not summary.configs:
            raise PublishError(f"{out_dir}: every table is empty, nothing to publish")
        counts = {k: v - before.get(k, 0) for k, v in scrubber.counts.items()}
        summary.redactions = {k: v for k, v in counts.items() if v}
        summary.plots = copy_plots(out_dir / "plots", staging / "plots")
        report = scrubber.scrub_value(read_json(out_dir / REPORT_NAME))
        if report:
            text = json.dumps(report, indent=2, sort_keys=False) + "\n"
            (staging / REPORT_NAME).write_text(text, encoding="utf-8")
        inputs = _card_inputs(out_dir, summary, splits, license, repo_id, seed)
        inputs = replace(
            inputs,
            license_name=license_name,
            license_link=license_link,
            target=target or repo_id or str(dest.resolve()),
            inputs=input_sources(inputs.resolved_config, input_licenses),
        )
        (staging / "README.md").write_text(build_card(inputs), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, dest)
    return summary


def _card_inputs(
    out_dir: Path,
    summary: LayoutSummary,
    splits: dict[str, float],
    license: str,
    repo: str | None,
    seed: int,
) -> CardInputs:
    """What the card shows: the layout plus the run's report, config and config hash."""
    values: dict[str, set[str]] = {}
    for layout in summary.configs.values():
        for column, seen in layout.values.items():
            values.setdefault(column, set()).update(seen)
    report = read_json(out_dir / REPORT_NAME)
    return CardInputs(
        configs=summary.configs,
        report=report,
        resolved_config=read_yaml(out_dir / "config.resolved.yaml"),
        plots=summary.plots,
        license=license,
        repo_id=repo,
        redactions=summary.redactions,
        empty_configs=summary.empty_configs,
        config_hash=read_text(out_dir / "config.hash"),
        data_values={c: sorted(v) for c, v in values.items()},
        trajectories_per_split=count_per_split(summary.split_of_trajectory, splits),
        splits=splits,
        seed=seed,
        report_published=bool(report),
    )


def _write_config(
    config: str,
    source: Path,
    staging: Path,
    splits: dict[str, float],
    scrubber: Scrubber,
    assigned: dict[str, str],
    *,
    seed: int,
    max_rows: int,
    batch_size: int,
) -> ConfigLayout:
    files = parquet_files(source)
    try:
        schema = pa.unify_schemas([pq.read_schema(f) for f in files])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise PublishError(f"{source}: shards have incompatible schemas: {err}") from err
    if ID_COLUMN not in schema.names:
        raise PublishError(f"{source}: no `{ID_COLUMN}` column, cannot split by trajectory")
    schema = schema.remove_metadata()
    published = reshaped_schema(config, schema)
    folder = staging / "data" / config
    writers = {s: ShardWriter(folder, s, published, max_rows) for s in splits}
    dataset = ds.dataset([str(f) for f in files], schema=schema, format="parquet")
    values: dict[str, set[str]] = {c: set() for c in PROVENANCE_COLUMNS if c in schema.names}
    for batch in dataset.to_batches(batch_size=batch_size):
        batch = scrub_batch(batch, scrubber)
        for column, seen in values.items():
            seen.update(v for v in pc.unique(batch.column(column)).to_pylist() if v)
        ids = batch.column(ID_COLUMN).to_pylist()
        names = [assigned.setdefault(i, split_of(i, splits, seed)) for i in ids]
        shaped = reshape(config, batch)
        for split in splits:
            part = shaped.filter(pa.array([n == split for n in names], type=pa.bool_()))
            if part.num_rows:
                writers[split].write(part)
    files_out: dict[str, list[str]] = {}
    rows: dict[str, int] = {}
    num_bytes: dict[str, int] = {}
    for split, writer in writers.items():
        paths = writer.finish()
        if paths:  # a split without rows has no file and is not declared
            files_out[split] = [p.relative_to(staging).as_posix() for p in paths]
            rows[split] = writer.total_rows
            num_bytes[split] = writer.total_bytes
    distinct = {c: sorted(v) for c, v in values.items() if v}
    return ConfigLayout(config, published, rows, files_out, num_bytes, distinct)
