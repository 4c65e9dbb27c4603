"""Files → canonical `trajectories`, `steps` and `quarantine` tables, streaming and in parallel.

Inputs are expanded lazily into `Source`s, grouped into tasks of bounded size, and each task is
processed by a worker process that writes its own Parquet shards. Workers return only counts,
so memory stays bounded whatever the corpus size.
"""

from __future__ import annotations

import codecs
import glob
import logging
import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.errors import InputError, UnknownFormatError
from builder.formats import detect, get_adapter
from builder.formats.base import FormatAdapter, Source, quarantine
from builder.shards import ShardWriter
from builder.steps import EligibilityRules, build_steps
from schemas.quarantine import QUARANTINE_SCHEMA, QuarantineRecord
from schemas.steps import STEP_SCHEMA
from schemas.trajectories import TRAJECTORY_SCHEMA, TrajectoryRecord

log = logging.getLogger(__name__)

TRAJECTORY_SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson", ".parquet")
SIDECAR_NAMES = frozenset({"report.json", "results.json", "config.json", "dataset_info.json"})
TASK_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class InputSpec:
    """One user input: a path, directory, glob or Hub id, with an optional forced format."""

    path: str
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class FormatCounts:
    files: int = 0
    trajectories: int = 0
    steps: int = 0
    eligible: int = 0
    quarantined: int = 0

    def add(self, other: FormatCounts) -> None:
        self.files += other.files
        self.trajectories += other.trajectories
        self.steps += other.steps
        self.eligible += other.eligible
        self.quarantined += other.quarantined


@dataclass
class IngestSummary:
    by_format: dict[str, FormatCounts] = field(default_factory=dict)
    bytes_read: int = 0

    def merge(self, other: IngestSummary) -> None:
        self.bytes_read += other.bytes_read
        for name, counts in other.by_format.items():
            self.by_format.setdefault(name, FormatCounts()).add(counts)

    def counts(self, fmt: str) -> FormatCounts:
        return self.by_format.setdefault(fmt, FormatCounts())

    @property
    def total(self) -> FormatCounts:
        total = FormatCounts()
        for counts in self.by_format.values():
            total.add(counts)
        return total


def is_dataset_dir(path: Path) -> bool:
    """A folder that is one Hugging Face dataset (saved or Parquet shards), not a tree of logs."""
    if (path / "dataset_info.json").exists() or (path / "state.json").exists():
        return True
    return (path / "data").is_dir() and any((path / "data").glob("*.parquet"))


def expand(spec: InputSpec) -> Iterator[Source]:
    """Sources for one input, in sorted (deterministic) order."""
    path = Path(spec.path)
    if path.is_file():
        yield Source(path, dict(spec.options))
    elif path.is_dir():
        if is_dataset_dir(path):
            yield Source(path, dict(spec.options))
            return
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.startswith(".") or name in SIDECAR_NAMES:
                    continue
                if name.lower().endswith(TRAJECTORY_SUFFIXES):
                    yield Source(Path(root) / name, dict(spec.options))
    elif any(ch in spec.path for ch in "*?["):
        for match in sorted(glob.glob(spec.path, recursive=True)):
            yield from expand(InputSpec(match, spec.format, spec.options))
    elif spec.path.count("/") == 1 and not spec.path.startswith((".", "/")):
        yield Source(path, {**spec.options, "hub": spec.path})
    else:
        yield Source(path, {**spec.options, "missing": True})


def _size(source: Source) -> int:
    try:
        return source.path.stat().st_size if source.path.is_file() else TASK_BYTES
    except OSError:
        return 0


def tasks(specs: Iterable[InputSpec]) -> Iterator[list[tuple[Source, str | None]]]:
    """Groups of sources of about TASK_BYTES each: the unit of work of one worker call."""
    group: list[tuple[Source, str | None]] = []
    size = 0
    for spec in specs:
        for source in expand(spec):
            group.append((source, spec.format))
            size += _size(source)
            if size >= TASK_BYTES:
                yield group
                group, size = [], 0
    if group:
        yield group


def load_source(
    source: Source, forced: str | None
) -> tuple[str, FormatAdapter | None, Iterator[TrajectoryRecord | QuarantineRecord]]:
    """(format name, adapter, records) for one source; whole-source errors become quarantine."""
    try:
        if source.options.get("missing"):
            raise InputError(
                f"{source.name}: no such file, directory or Hub dataset", kind="missing"
            )
        if source.is_file and source.path.stat().st_size == 0:
            raise InputError(f"{source.name}: empty file", kind="empty")
        adapter = get_adapter(forced) if forced else detect(source)
    except UnknownFormatError as exc:
        return "unknown", None, iter([quarantine(source, None, None, diagnose(source, exc))])
    except InputError as exc:
        return "unknown", None, iter([quarantine(source, None, forced, exc)])
    return adapter.name, adapter, _guarded(source, adapter)


def diagnose(source: Source, error: InputError) -> InputError:
    """A more precise cause than "unknown format" when the file is not even valid JSON/UTF-8."""
    if not source.is_file:
        return error
    decoder = codecs.getincrementaldecoder("utf-8")()
    with source.path.open("rb") as fh:
        for offset, block in enumerate(iter(lambda: fh.read(1 << 20), b"")):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                return InputError(
                    f"{source.name}: not UTF-8 text (near byte {offset * (1 << 20) + exc.start}: "
                    f"{exc.reason})",
                    kind="encoding",
                )
    if not source.is_jsonl:
        try:
            source.document()
        except InputError as exc:
            return exc
    return error


def _guarded(
    source: Source, adapter: FormatAdapter
) -> Iterator[TrajectoryRecord | QuarantineRecord]:
    """The adapter's records; an error escaping it quarantines the rest of the source."""
    try:
        yield from adapter.load(source)
    except InputError as exc:
        yield quarantine(source, None, adapter.name, exc)
    except Exception as exc:  # an adapter bug must not stop the corpus; record it
        log.exception("%s: adapter %s failed", source.name, adapter.name)
        error = InputError(f"{source.name}: {type(exc).__name__}: {exc}", kind="adapter_error")
        yield quarantine(source, None, adapter.name, error)


def process_task(
    task_id: int,
    group: list[tuple[Source, str | None]],
    out_dir: Path,
    rules: EligibilityRules,
) -> IngestSummary:
    """Ingest one group of sources into shards named after the task (deterministic, resumable)."""
    summary = IngestSummary()
    prefix = f"part-{task_id:06d}"
    with (
        ShardWriter(out_dir / "trajectories", TRAJECTORY_SCHEMA, prefix) as trajectories,
        ShardWriter(out_dir / "steps", STEP_SCHEMA, prefix) as steps,
        ShardWriter(out_dir / "quarantine", QUARANTINE_SCHEMA, prefix) as quarantined,
    ):
        for source, forced in group:
            fmt, adapter, records = load_source(source, forced)
            counts = summary.counts(fmt)
            counts.files += 1
            summary.bytes_read += _size(source) if source.is_file else 0
            for record in records:
                if isinstance(record, QuarantineRecord):
                    log.warning(
                        "quarantined %s [%s]: %s",
                        record.source_path,
                        record.error_kind,
                        record.message,
                    )
                    summary.counts(record.source_format or fmt).quarantined += 1
                    quarantined.add(record)
                    continue
                assert adapter is not None
                counts.trajectories += 1
                trajectories.add(record)
                for step in build_steps(record, adapter, rules):
                    counts.steps += 1
                    counts.eligible += step.eligible
                    steps.add(step)
                    if step.ineligible_reason == "observation_too_large":
                        big = oversized(record, step.step_index, len(step.observation), rules)
                        log.warning("quarantined %s", big.message)
                        counts.quarantined += 1
                        quarantined.add(big)
    return summary


def oversized(
    record: TrajectoryRecord, step_index: int, chars: int, rules: EligibilityRules
) -> QuarantineRecord:
    """The quarantine row that reports a huge observation (its step is kept, not eligible)."""
    return QuarantineRecord(
        record.source_path,
        record.record_index,
        record.source_format,
        "oversized_observation",
        f"{record.source_path} record {record.record_index}: observation of step {step_index} "
        f"has {chars:,} characters (limit {rules.max_observation_chars:,}); step kept, "
        "not eligible",
    )


def run_ingest(
    specs: list[InputSpec],
    out_dir: Path,
    *,
    rules: EligibilityRules | None = None,
    workers: int | None = None,
) -> IngestSummary:
    """Ingest every input into OUT/{trajectories,steps,quarantine}/ with `workers` processes."""
    rules = rules or EligibilityRules()
    workers = workers or min(2, os.cpu_count() or 1)
    summary = IngestSummary()
    if workers <= 1:
        for task_id, group in enumerate(tasks(specs)):
            summary.merge(process_task(task_id, group, out_dir, rules))
        return summary
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: set[Future[IngestSummary]] = set()
        for task_id, group in enumerate(tasks(specs)):
            pending.add(pool.submit(process_task, task_id, group, out_dir, rules))
            if len(pending) >= workers * 2:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    summary.merge(future.result())
        for future in pending:
            summary.merge(future.result())
    return summary


def format_summary(summary: IngestSummary) -> str:
    """The per-format table the CLI prints."""
    header = (
        f"{'format':<20} {'files':>7} {'trajectories':>12} {'steps':>8} {'eligible':>8} "
        f"{'quarantined':>11}"
    )
    lines = [header, "-" * len(header)]
    rows = [*sorted(summary.by_format.items()), ("TOTAL", summary.total)]
    for name, c in rows:
        lines.append(
            f"{name:<20} {c.files:>7} {c.trajectories:>12} {c.steps:>8} {c.eligible:>8} "
            f"{c.quarantined:>11}"
        )
    return "\n".join(lines)
