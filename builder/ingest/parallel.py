"""Files → canonical `trajectories`, `steps` and `quarantine` tables, streaming and in parallel.

Inputs are expanded lazily into `Source`s (`builder.ingest.expand`), grouped into tasks of bounded
size, and each task is processed by a worker process that writes its own Parquet shards.
Workers return only counts and one small `Copy` per kept trajectory, so memory stays bounded
whatever the corpus size; the parent then drops duplicates across tasks (`builder.ingest.dedup`).

No input aborts or hangs a run: every file is checked before it is opened
(`builder.ingest.file_reading`), and every failure becomes a quarantine row naming the file, the
record and the cause (one task's work is `builder.ingest.task`).

Ingest owns the three table folders of `--out`: stale shards (`*.parquet`) left there by an
earlier ingest are removed before writing, so the tables, the summary it prints and
`ingest_summary.json` always describe exactly what the folder holds. Other files in `--out`
(a run's NAP tables, caches) are not touched.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from pathlib import Path

from builder.ingest.dedup import Registry, drop_from_shards
from builder.ingest.expand import InputSpec, expand, tasks
from builder.ingest.formats.source import Source
from builder.ingest.summary import IngestSummary, format_summary, watched_lines, write_summary
from builder.ingest.task import load_source, process_task, task_prefix
from builder.scrub.settings import ScrubSettings
from builder.steps.pairing import EligibilityRules
from builder.storage.parquet_shards import ShardWriter
from schemas.quarantine import QUARANTINE_SCHEMA

__all__ = [
    "IngestSummary",
    "InputSpec",
    "executor_tasks",
    "expand",
    "format_summary",
    "load_source",
    "process_task",
    "run_ingest",
    "tasks",
]

log = logging.getLogger(__name__)

TABLES = ("trajectories", "steps", "quarantine")
SUMMARY_FILE = "ingest_summary.json"


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
                drop_from_shards(out_dir, task_prefix(task_id), dropped)
    return summary


TaskRunner = Callable[
    [Iterable[InputSpec], Path, EligibilityRules, ScrubSettings],
    Iterable[tuple[int, IngestSummary]],
]
"""Runs `process_task` over `tasks(specs)`, yielding (task id, summary) in any order."""


def run_ingest(
    specs: list[InputSpec],
    out_dir: Path,
    *,
    rules: EligibilityRules | None = None,
    workers: int | None = None,
    runner: TaskRunner | None = None,
    scrub: ScrubSettings | None = None,
) -> IngestSummary:
    """Ingest every input into OUT/{trajectories,steps,quarantine}/ with `workers` processes,
    or with `runner` (the Ray engine runs the same tasks on its shard actors); the tables are
    scrubbed unless `scrub` says otherwise."""
    rules = rules or EligibilityRules()
    scrub = scrub or ScrubSettings()
    workers = workers or min(2, os.cpu_count() or 1)
    clear_tables(out_dir)
    if runner is None:
        results = list(_run_tasks(specs, out_dir, rules, workers, scrub))
    else:
        results = list(runner(specs, out_dir, rules, scrub))
    summary = _dedup_across_tasks(results, out_dir)
    write_summary(summary, out_dir / SUMMARY_FILE)
    excluded = summary.total.excluded
    if excluded:
        log.info(
            "exclude_instances: dropped %d trajectories of %d instances before any request",
            excluded, len(summary.excluded_instances),
        )  # fmt: skip
    for line in watched_lines(summary):
        log.warning(line)
    return summary


def _warm_before_fork() -> None:
    """Load the tokenizer and pyarrow's pandas shim (its first table may import pandas, see
    `builder.startup.skip_pandas_probe`) once here, so that forked workers inherit them
    instead of each paying up to ~1 s of CPU to load them; the run loads both anyway."""
    import pyarrow as pa

    from builder.steps.tokens import cl100k

    cl100k()
    pa.array([0])


def _run_tasks(
    specs: Iterable[InputSpec],
    out_dir: Path,
    rules: EligibilityRules,
    workers: int,
    scrub: ScrubSettings,
) -> Iterator[tuple[int, IngestSummary]]:
    groups = tasks(specs)
    head = list(itertools.islice(groups, 2))
    if workers <= 1 or len(head) < 2:
        # One task: a pool would only add forked workers that import the adapters again
        # (~0.1 s of CPU on small inputs) to run it in one of them.
        for task_id, group in enumerate(itertools.chain(head, groups)):
            yield task_id, process_task(task_id, group, out_dir, rules, scrub)
        return
    _warm_before_fork()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        numbered = enumerate(itertools.chain(head, groups))
        yield from _submitted(pool, workers, numbered, out_dir, rules, scrub)


def executor_tasks(
    pool: Executor,
    workers: int,
    while_waiting: Callable[[], None] = lambda: None,
    task: Callable[..., IngestSummary] = process_task,
) -> TaskRunner:
    """A `TaskRunner` on an executor the caller owns (the run's worker processes, forked
    already), even for a single task; `while_waiting` runs once the first tasks are queued,
    so the caller's own start-up work overlaps the ingest. `task` is `process_task` or a
    picklable function that calls it."""

    def run(
        specs: Iterable[InputSpec], out_dir: Path, rules: EligibilityRules, scrub: ScrubSettings
    ) -> Iterator[tuple[int, IngestSummary]]:
        numbered = enumerate(tasks(specs))
        yield from _submitted(pool, workers, numbered, out_dir, rules, scrub, while_waiting, task)

    return run


def _submitted(
    pool: Executor,
    workers: int,
    numbered: Iterable[tuple[int, list[tuple[Source, str | None]]]],
    out_dir: Path,
    rules: EligibilityRules,
    scrub: ScrubSettings,
    while_waiting: Callable[[], None] = lambda: None,
    task: Callable[..., IngestSummary] = process_task,
) -> Iterator[tuple[int, IngestSummary]]:
    """`task` (`process_task`) over the groups in `pool`, at most two per worker queued at
    once (the groups are read lazily: memory stays bounded)."""
    pending: dict[Future[IngestSummary], int] = {}
    waited = False
    for task_id, group in numbered:
        pending[pool.submit(task, task_id, group, out_dir, rules, scrub)] = task_id
        if len(pending) >= workers * 2:
            if not waited:
                waited = True
                while_waiting()
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    if not waited:
        while_waiting()
    for future, task_id in pending.items():
        yield task_id, future.result()
