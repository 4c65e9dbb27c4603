"""What one ingest task reads: its sources, with archives opened into their members and JSON
arrays of trajectories split into their elements.

Nothing here raises for a bad input: a member or archive that cannot be read becomes a
quarantine row (`report`), and a file that is not a trajectory file is named as passed over
(`passed`), so `--strict` sees it. Members keep the archive's name: `dump.zip!run/x.traj`.
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath

from builder.errors import InputError, UnknownFormatError
from builder.ingest.archives import archive_error, archive_kind, unpacked
from builder.ingest.expand import SIDECAR_NAMES, is_trajectory_name
from builder.ingest.file_reading import check_file
from builder.ingest.formats import detect, get_adapter
from builder.ingest.formats.base import quarantine
from builder.ingest.formats.source import Source
from builder.ingest.json_stream import array_items, first_item
from schemas.quarantine import QuarantineRecord

Unit = tuple[Source, str | None]
Report = Callable[[QuarantineRecord], None]
Passed = Callable[[list[str], int], None]


def units(group: Iterable[Unit], report: Report, passed: Passed) -> Iterator[Unit]:
    """Each source of the group as the sources to load: itself, its archive members, or the
    elements of its array."""
    for source, forced in group:
        names = source.options.get("passed_over")
        if isinstance(names, list):
            passed(names, int(source.options.get("passed_over_count", len(names))))
            continue
        kind = _archive(source)
        if kind is None:
            yield from elements(source, forced, report)
        else:
            yield from _members(source, kind, forced, report, passed)


def _readable_file(source: Source) -> bool:
    """A plain local file that passed the checks (anything else is reported by the loader)."""
    if {"error", "missing", "hub"} & source.options.keys():
        return False
    return check_file(source.path) is None and source.path.is_file()


def _archive(source: Source) -> str | None:
    return archive_kind(source.path) if _readable_file(source) else None


def _members(
    source: Source, kind: str, forced: str | None, report: Report, passed: Passed
) -> Iterator[Unit]:
    """The trajectory files of an archive, unpacked whole first (so that a sidecar such as
    `report.json` is beside its trajectory whatever the member order)."""
    with unpacked(source.path, kind, source.name) as members:
        written = []
        try:
            for member in members:
                label = f"{source.name}!{member.name}"
                if member.problem is not None:
                    report(quarantine(Source(source.path, label=label), None, None, member.problem))
                else:
                    written.append((label, member))
        except (InputError, tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
            report(quarantine(source, None, forced, archive_error(source.name, kind, exc)))
        skipped: list[str] = []
        for label, member in written:
            assert member.path is not None
            base = PurePosixPath(member.name).name
            if archive_kind(member.path) is not None:
                error = InputError(
                    f"{label}: an archive inside an archive is not unpacked (unpack the outer "
                    "one and give the folder)",
                    kind="nested_archive",
                )
                report(quarantine(Source(member.path, label=label), None, None, error))
            elif is_trajectory_name(base):
                yield from elements(
                    Source(member.path, dict(source.options), label), forced, report
                )
            elif base.lower() not in SIDECAR_NAMES:
                skipped.append(label)
        if skipped:
            passed(skipped, len(skipped))


def elements(source: Source, forced: str | None, report: Report) -> Iterator[Unit]:
    """`source` itself, or, for a JSON array whose elements are trajectories, each element
    (read one at a time, `builder.ingest.json_stream.array_items`)."""
    if not _array_of_trajectories(source, forced):
        yield source, forced
        return
    for index, value in array_items(source.open, source.name):
        if isinstance(value, InputError):
            report(quarantine(source, index, forced, value))
        else:
            yield Source.of_value(source, index, value), forced
        del value


def _array_of_trajectories(source: Source, forced: str | None) -> bool:
    """A JSON file whose top level is an array and whose first element an adapter takes for
    a whole trajectory (a bare list of messages or events is one trajectory: its first
    element is a message, which no adapter takes for a trajectory)."""
    if not _readable_file(source) or source.is_jsonl:
        return False
    try:
        if not source.head(4096).lstrip().startswith("["):
            return False
        first = first_item(source.open, source.name)
    except (InputError, OSError):
        return False
    if not isinstance(first, dict | list) or not first:
        return False
    element = Source.of_value(source, 0, first)
    try:
        return bool(get_adapter(forced).detect(element)) if forced else bool(detect(element))
    except (UnknownFormatError, InputError):
        return False
