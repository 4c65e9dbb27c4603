"""One ingest task's work: a group of sources read, checked and written as Parquet shards.

A task runs in a worker process (the ingest's own pool, the run's workers, or a Ray task) and
returns only counts and one small `Copy` per kept trajectory (`ingest.parallel` merges them).
No input aborts it: a failure becomes a quarantine row naming the file, the record and the
cause, and a source that yields nothing gets a row saying so.
"""

from __future__ import annotations

import codecs
import dataclasses
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path

from builder.errors import InputError, UnknownFormatError
from builder.ingest.dedup import Copy, Registry
from builder.ingest.expand import source_size
from builder.ingest.file_reading import check_file
from builder.ingest.formats import detect, get_adapter
from builder.ingest.formats.base import FormatAdapter, quarantine
from builder.ingest.formats.source import Source
from builder.ingest.instances import instance_id_of, watched_sets_of
from builder.ingest.names import safe_text
from builder.ingest.scrubbing import IngestScrubber
from builder.ingest.storable import misfit
from builder.ingest.summary import FormatCounts, IngestSummary
from builder.ingest.units import units
from builder.scrub.settings import ScrubSettings
from builder.steps.pairing import EligibilityRules, build_steps
from builder.storage.parquet_shards import ShardWriter
from schemas.quarantine import QUARANTINE_SCHEMA, QuarantineRecord
from schemas.steps import STEP_SCHEMA
from schemas.trajectories import TRAJECTORY_SCHEMA, TrajectoryRecord

log = logging.getLogger(__name__)

DIAGNOSE_LINES = 1000  # JSONL lines read to name the cause of an unrecognised file


def load_source(
    source: Source, forced: str | None
) -> tuple[str, FormatAdapter | None, Iterator[TrajectoryRecord | QuarantineRecord]]:
    """(format name, adapter, records) for one source; whole-source errors become quarantine."""
    try:
        problem = source.options.get("error")
        if isinstance(problem, InputError):
            raise problem
        if source.options.get("missing"):
            raise InputError(
                f"{source.name}: no such file, directory or Hub dataset", kind="missing"
            )
        if "hub" not in source.options:
            problem = check_file(source.path)
            if problem is not None:
                raise problem
        if source.is_file and source.path.stat().st_size == 0:
            raise InputError(f"{source.name}: empty file", kind="empty")
        adapter = get_adapter(forced) if forced else detect(source)
    except UnknownFormatError as exc:
        return "unknown", None, iter([quarantine(source, None, forced, diagnose(source, exc))])
    except InputError as exc:
        return "unknown", None, iter([quarantine(source, None, forced, exc)])
    except OSError as exc:  # a race (file removed or changed since the check)
        error = InputError(f"{source.name}: {exc.strerror or exc}", kind="io")
        return "unknown", None, iter([quarantine(source, None, forced, error)])
    return adapter.name, adapter, _guarded(source, adapter)


def diagnose(source: Source, error: InputError) -> InputError:
    """A more precise cause than "unknown format": not UTF-8, not JSON, corrupt gzip..."""
    if not source.is_file:
        return error
    try:
        decoder = codecs.getincrementaldecoder("utf-8")()
        with source.open() as fh:
            for offset, block in enumerate(iter(lambda: fh.read(1 << 20), b"")):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as exc:
                    return InputError(
                        f"{source.name}: not UTF-8 text (near byte "
                        f"{offset * (1 << 20) + exc.start}: {exc.reason})",
                        kind="encoding",
                    )
        if not source.is_jsonl:
            source.document()
        else:
            head = list(itertools.islice(source.lines(), DIAGNOSE_LINES))
            bad = [v for _, v in head if isinstance(v, InputError)]
            if bad and len(bad) == len(head):
                return bad[0]  # no line parsed: name the first bad one and its cause
    except InputError as exc:
        return exc
    except OSError as exc:
        return InputError(f"{source.name}: {exc.strerror or exc}", kind="io")
    return error


def _guarded(
    source: Source, adapter: FormatAdapter
) -> Iterator[TrajectoryRecord | QuarantineRecord]:
    """The adapter's records; an error escaping it quarantines the rest of the source."""
    try:
        yield from adapter.load(source)
    except InputError as exc:
        yield quarantine(source, None, adapter.name, exc)
    except RecursionError:
        error = InputError(f"{source.name}: structure nested too deep", kind="nesting_too_deep")
        yield quarantine(source, None, adapter.name, error)
    except OSError as exc:
        error = InputError(f"{source.name}: {exc.strerror or exc}", kind="io")
        yield quarantine(source, None, adapter.name, error)
    except Exception as exc:  # an adapter bug must not stop the corpus; record it
        log.exception("%s: adapter %s failed", source.name, adapter.name)
        error = InputError(f"{source.name}: {type(exc).__name__}: {exc}", kind="adapter_error")
        yield quarantine(source, None, adapter.name, error)


def unstorable(record: TrajectoryRecord) -> QuarantineRecord | None:
    """The row for a trajectory Arrow cannot store (`builder.ingest.storable`), else None: one such
    record must not fail the whole shard when it is written."""
    name = misfit(record)
    if name is None:
        return None
    value = repr(getattr(record, name, "?"))[:60] if "." not in name else "a value"
    return QuarantineRecord(
        record.source_path,
        record.record_index if name != "record_index" else None,
        record.source_format,
        "wrong_shape",
        f"{record.source_path} record {record.record_index}: `{name}` has {value} of a type "
        "or size its column cannot hold",
    )


def _nothing(source: Source, fmt: str) -> QuarantineRecord:
    """The row for a source that was read but gave neither a trajectory nor an error."""
    error = InputError(f"{source.name}: read as {fmt}, but holds no trajectory", kind="no_records")
    return quarantine(source, None, fmt, error)


def step_adapter(adapter: FormatAdapter, record: TrajectoryRecord) -> FormatAdapter:
    """The adapter whose grammar builds the record's steps: its own format's, as the run replays
    it (a trajectory read back from an ADP export keeps the format it was exported from)."""
    if record.source_format == adapter.name:
        return adapter
    return get_adapter(record.source_format)


def task_prefix(task_id: int) -> str:
    """The name every table file of one ingest task starts with."""
    return f"part-{task_id:06d}"


def process_task(
    task_id: int,
    group: list[tuple[Source, str | None]],
    out_dir: Path,
    rules: EligibilityRules,
    scrub: ScrubSettings = ScrubSettings(),  # noqa: B008 - frozen
) -> IngestSummary:
    """Ingest one group of sources into shards named after the task (deterministic, resumable).

    Within the task the first copy of a trajectory is kept (`builder.ingest.dedup`); the kept ones
    are listed in `summary.copies` for the parent's cross-task pass. With `scrub.ingest_scrubs`
    every trajectory is written scrubbed, and its steps are built from the scrubbed record
    (`builder.ingest.scrubbing`), so no table holds a raw secret.
    """
    summary = IngestSummary()
    registry = Registry()
    scrubbing = IngestScrubber.start(scrub)
    prefix = task_prefix(task_id)
    with (
        ShardWriter(out_dir / "trajectories", TRAJECTORY_SCHEMA, prefix) as trajectories,
        ShardWriter(out_dir / "steps", STEP_SCHEMA, prefix) as steps,
        ShardWriter(out_dir / "quarantine", QUARANTINE_SCHEMA, prefix) as quarantined,
    ):

        def reject(record: QuarantineRecord, fmt: str) -> None:
            record = scrubbing.quarantine(_safe(record))
            log.warning(
                "quarantined %s [%s]: %s", record.source_path, record.error_kind, record.message
            )
            counts = summary.counts(record.source_format or fmt)
            if record.error_kind.startswith("duplicate_"):
                counts.duplicates += 1
            else:
                counts.quarantined += 1
            quarantined.add(record)

        def report(record: QuarantineRecord) -> None:
            reject(record, record.source_format or "unknown")

        for source, forced in units(group, report, summary.pass_over):
            fmt, adapter, records = load_source(source, forced)
            counts = summary.counts(fmt)
            if not source.element:  # an array's elements count as one file
                counts.files += 1
                summary.bytes_read += source_size(source) if source.is_file else 0
            produced = 0
            for record in records:
                produced += 1
                if source.element is not None:
                    record = dataclasses.replace(record, record_index=source.element)
                if isinstance(record, QuarantineRecord):
                    reject(record, fmt)
                    continue
                assert adapter is not None
                if excluded(record, rules, summary, counts):
                    continue
                bad = unstorable(record)
                if bad is not None:
                    reject(bad, fmt)
                    continue
                copy = Copy.of(record)
                duplicate = registry.claim(copy)
                if duplicate is not None:
                    reject(duplicate, fmt)
                    continue
                counts.trajectories += 1
                record = scrubbing.trajectory(record)
                trajectories.add(record)  # a huge record is written (and let go) right here
                batch = list(build_steps(record, step_adapter(adapter, record), rules))
                too_large = [
                    oversized(record, step.step_index, len(step.observation), rules)
                    for step in batch
                    if step.ineligible_reason == "observation_too_large"
                ]
                del record  # its texts may now be freed before the steps are converted to Arrow
                n_steps, n_eligible = len(batch), sum(step.eligible for step in batch)
                steps.take(batch)
                for row in too_large:
                    reject(row, fmt)
                counts.steps += n_steps
                counts.eligible += n_eligible
                summary.copies.append(  # counted under the file's format, as above
                    Copy(copy.trajectory_id, copy.content, copy.source_path, copy.record_index,
                         fmt, n_steps, n_eligible)
                )  # fmt: skip
            if not produced:
                reject(_nothing(source, fmt), fmt)
    scrubbing.finish(summary)
    return summary


def excluded(
    record: TrajectoryRecord, rules: EligibilityRules, summary: IngestSummary, counts: FormatCounts
) -> bool:
    """The decontamination filter: True (counted) when the record's instance is excluded; a
    kept record of a watched evaluation set's instance is noted for the warning."""
    instance = instance_id_of(record.source_format, record.native_id)
    if instance is None:
        return False
    if instance in rules.exclude_instances:
        counts.excluded += 1
        summary.excluded_instances[instance] = summary.excluded_instances.get(instance, 0) + 1
        return True
    for name in watched_sets_of(instance):
        summary.watched.setdefault(name, set()).add(instance)
    return False


def _safe(record: QuarantineRecord) -> QuarantineRecord:
    """The row with a name and message that can be stored and printed, whatever bytes the
    file name or the error held."""
    path, message = safe_text(record.source_path), safe_text(record.message)
    if path == record.source_path and message == record.message:
        return record
    return dataclasses.replace(record, source_path=path, message=message)


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
