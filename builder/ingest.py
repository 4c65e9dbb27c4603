"""Files → canonical `trajectories`, `steps` and `quarantine` tables, streaming and in parallel.

Inputs are expanded lazily into `Source`s (`builder.expand`), grouped into tasks of bounded
size, and each task is processed by a worker process that writes its own Parquet shards.
Workers return only counts and one small `Copy` per kept trajectory, so memory stays bounded
whatever the corpus size; the parent then drops duplicates across tasks (`builder.dedup`).

No input aborts or hangs a run: every file is checked before it is opened (`builder.inputs`),
every failure becomes a quarantine row naming the file, the record and the cause, and a
source that yields nothing gets a row saying so.

Ingest owns the three table folders of `--out`: stale shards (`*.parquet`) left there by an
earlier ingest are removed before writing, so the tables, the summary it prints and
`ingest_summary.json` always describe exactly what the folder holds. Other files in `--out`
(a run's NAP tables, caches) are not touched.
"""

from __future__ import annotations

import codecs
import itertools
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from builder.dedup import Copy, Registry, drop_from_shards
from builder.errors import InputError, UnknownFormatError
from builder.expand import InputSpec, expand, source_size, tasks
from builder.formats import detect, get_adapter
from builder.formats.base import FormatAdapter, Source, quarantine
from builder.ingest_summary import IngestSummary, format_summary, write_summary
from builder.inputs import check_file
from builder.shards import ShardWriter
from builder.steps import EligibilityRules, build_steps
from builder.storable import misfit
from schemas.quarantine import QUARANTINE_SCHEMA, QuarantineRecord
from schemas.steps import STEP_SCHEMA
from schemas.trajectories import TRAJECTORY_SCHEMA, TrajectoryRecord

__all__ = ["IngestSummary", "InputSpec", "expand", "format_summary", "run_ingest", "tasks"]

log = logging.getLogger(__name__)

TABLES = ("trajectories", "steps", "quarantine")
SUMMARY_FILE = "ingest_summary.json"
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
            head = itertools.islice(source.lines(), DIAGNOSE_LINES)
            bad = [v for _, v in head if isinstance(v, InputError)]
            if bad and all(b.kind == bad[0].kind for b in bad) and bad[0].kind != "invalid_json":
                return bad[0]  # e.g. every line nested too deep
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
    """The row for a trajectory Arrow cannot store (`builder.storable`), else None: one such
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


def process_task(
    task_id: int,
    group: list[tuple[Source, str | None]],
    out_dir: Path,
    rules: EligibilityRules,
) -> IngestSummary:
    """Ingest one group of sources into shards named after the task (deterministic, resumable).

    Within the task the first copy of a trajectory is kept (`builder.dedup`); the kept ones
    are listed in `summary.copies` for the parent's cross-task pass.
    """
    summary = IngestSummary()
    registry = Registry()
    prefix = f"part-{task_id:06d}"
    with (
        ShardWriter(out_dir / "trajectories", TRAJECTORY_SCHEMA, prefix) as trajectories,
        ShardWriter(out_dir / "steps", STEP_SCHEMA, prefix) as steps,
        ShardWriter(out_dir / "quarantine", QUARANTINE_SCHEMA, prefix) as quarantined,
    ):

        def reject(record: QuarantineRecord, fmt: str) -> None:
            log.warning(
                "quarantined %s [%s]: %s", record.source_path, record.error_kind, record.message
            )
            counts = summary.counts(record.source_format or fmt)
            if record.error_kind.startswith("duplicate_"):
                counts.duplicates += 1
            else:
                counts.quarantined += 1
            quarantined.add(record)

        for source, forced in group:
            fmt, adapter, records = load_source(source, forced)
            counts = summary.counts(fmt)
            counts.files += 1
            summary.bytes_read += source_size(source) if source.is_file else 0
            produced = 0
            for record in records:
                produced += 1
                if isinstance(record, QuarantineRecord):
                    reject(record, fmt)
                    continue
                assert adapter is not None
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
                trajectories.add(record)  # a huge record is written (and let go) right here
                batch = list(build_steps(record, adapter, rules))
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
                summary.copies.append(
                    Copy(copy.trajectory_id, copy.content, copy.source_path, copy.record_index,
                         copy.source_format, n_steps, n_eligible)
                )  # fmt: skip
            if not produced:
                reject(_nothing(source, fmt), fmt)
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


def clear_tables(out_dir: Path) -> int:
    """Remove the shards an earlier ingest left in OUT's table folders; how many were removed."""
    removed = 0
    for table in TABLES:
        folder = out_dir / table
        if not folder.is_dir():
            continue
        for path in [*folder.glob("*.parquet"), *folder.glob(".*.tmp-*")]:
            path.unlink()
            removed += 1
    (out_dir / SUMMARY_FILE).unlink(missing_ok=True)
    if removed:
        log.info("%s: removed %d shard(s) of an earlier ingest", out_dir, removed)
    return removed


def _dedup_across_tasks(results: list[tuple[int, IngestSummary]], out_dir: Path) -> IngestSummary:
    """Merge task summaries in task order, dropping later copies of a trajectory."""
    summary = IngestSummary()
    registry = Registry()
    with ShardWriter(out_dir / "quarantine", QUARANTINE_SCHEMA, "dedup") as quarantined:
        for task_id, part in sorted(results, key=lambda item: item[0]):
            summary.merge(part)
            dropped: set[str] = set()
            for copy in part.copies:
                row = registry.claim(copy)
                if row is None:
                    continue
                log.warning("dropped %s", row.message)
                quarantined.add(row)
                dropped.add(copy.trajectory_id)
                counts = summary.counts(copy.source_format)
                counts.trajectories -= 1
                counts.steps -= copy.steps
                counts.eligible -= copy.eligible
                counts.duplicates += 1
            if dropped:
                drop_from_shards(out_dir, f"part-{task_id:06d}", dropped)
    return summary


TaskRunner = Callable[
    [Iterable[InputSpec], Path, EligibilityRules], Iterable[tuple[int, IngestSummary]]
]
"""Runs `process_task` over `tasks(specs)`, yielding (task id, summary) in any order."""


def run_ingest(
    specs: list[InputSpec],
    out_dir: Path,
    *,
    rules: EligibilityRules | None = None,
    workers: int | None = None,
    runner: TaskRunner | None = None,
) -> IngestSummary:
    """Ingest every input into OUT/{trajectories,steps,quarantine}/ with `workers` processes,
    or with `runner` (the Ray engine runs the same tasks as Ray tasks)."""
    rules = rules or EligibilityRules()
    workers = workers or min(2, os.cpu_count() or 1)
    clear_tables(out_dir)
    if runner is None:
        results = list(_run_tasks(specs, out_dir, rules, workers))
    else:
        results = list(runner(specs, out_dir, rules))
    summary = _dedup_across_tasks(results, out_dir)
    write_summary(summary, out_dir / SUMMARY_FILE)
    return summary


def _warm_before_fork() -> None:
    """Load the tokenizer and pyarrow's pandas shim (its first table may import pandas, see
    `builder.startup.skip_pandas_probe`) once here, so that forked workers inherit them
    instead of each paying up to ~1 s of CPU to load them; the run loads both anyway."""
    import pyarrow as pa

    from builder.tokens import cl100k

    cl100k()
    pa.array([0])


def _run_tasks(
    specs: Iterable[InputSpec], out_dir: Path, rules: EligibilityRules, workers: int
) -> Iterator[tuple[int, IngestSummary]]:
    groups = tasks(specs)
    head = list(itertools.islice(groups, 2))
    if workers <= 1 or len(head) < 2:
        # One task: a pool would only add forked workers that import the adapters again
        # (~0.1 s of CPU on small inputs) to run it in one of them.
        for task_id, group in enumerate(itertools.chain(head, groups)):
            yield task_id, process_task(task_id, group, out_dir, rules)
        return
    _warm_before_fork()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: dict[Future[IngestSummary], int] = {}
        for task_id, group in enumerate(itertools.chain(head, groups)):
            pending[pool.submit(process_task, task_id, group, out_dir, rules)] = task_id
            if len(pending) >= workers * 2:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
        for future, task_id in pending.items():
            yield task_id, future.result()
