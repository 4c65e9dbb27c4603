"""What an ingest produced, per format: the table the CLI prints and `ingest_summary.json`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from builder.ingest.dedup import Copy


@dataclass
class FormatCounts:
    """Counts of one format; `duplicates` are copies dropped by `builder.ingest.dedup` (each has a
    quarantine row too, but is not counted in `quarantined`); `excluded` are trajectories of
    instances listed in `exclude_instances` (dropped before any table is written)."""

    files: int = 0
    trajectories: int = 0
    steps: int = 0
    eligible: int = 0
    quarantined: int = 0
    duplicates: int = 0
    excluded: int = 0

    def add(self, other: FormatCounts) -> None:
        self.files += other.files
        self.trajectories += other.trajectories
        self.steps += other.steps
        self.eligible += other.eligible
        self.quarantined += other.quarantined
        self.duplicates += other.duplicates
        self.excluded += other.excluded


PASSED_OVER_KEPT = 1000  # names listed in ingest_summary.json (all are counted)
PASSED_OVER_SHOWN = 10  # names printed


@dataclass
class IngestSummary:
    by_format: dict[str, FormatCounts] = field(default_factory=dict)
    bytes_read: int = 0
    copies: list[Copy] = field(default_factory=list)  # kept trajectories, in input order
    # instance -> trajectories dropped by `exclude_instances` (bounded by the list's size)
    excluded_instances: dict[str, int] = field(default_factory=dict)
    # watched evaluation set -> its instances that trajectories kept here belong to
    watched: dict[str, set[str]] = field(default_factory=dict)
    # files of input folders and archives that are not trajectory files (README.md, a.png)
    passed_over: list[str] = field(default_factory=list)
    passed_over_count: int = 0
    scrubbed: bool = False  # the tables were written with credentials redacted
    redactions: dict[str, int] = field(default_factory=dict)  # per kind, at ingest

    def merge(self, other: IngestSummary) -> None:
        self.bytes_read += other.bytes_read
        for instance, n in other.excluded_instances.items():
            self.excluded_instances[instance] = self.excluded_instances.get(instance, 0) + n
        for name, ids in other.watched.items():
            self.watched.setdefault(name, set()).update(ids)
        for name, counts in other.by_format.items():
            self.by_format.setdefault(name, FormatCounts()).add(counts)
        self.pass_over(other.passed_over, other.passed_over_count)
        self.scrubbed = self.scrubbed or other.scrubbed
        self.add_redactions(other.redactions)

    def add_redactions(self, counts: dict[str, int]) -> None:
        for kind, n in counts.items():
            self.redactions[kind] = self.redactions.get(kind, 0) + n

    def pass_over(self, names: list[str], count: int) -> None:
        """Note files passed over (`count` of them, `names` the ones named)."""
        self.passed_over.extend(names[: max(0, PASSED_OVER_KEPT - len(self.passed_over))])
        self.passed_over_count += count

    def counts(self, fmt: str) -> FormatCounts:
        return self.by_format.setdefault(fmt, FormatCounts())

    @property
    def total(self) -> FormatCounts:
        total = FormatCounts()
        for counts in self.by_format.values():
            total.add(counts)
        return total


def format_summary(summary: IngestSummary) -> str:
    """The per-format table the CLI prints."""
    header = (
        f"{'format':<17} {'files':>5} {'trajs':>6} {'steps':>7} {'eligible':>8} "
        f"{'quarantined':>11} {'duplicates':>10} {'excluded':>8}"
    )
    lines = [header, "-" * len(header)]
    rows = [*sorted(summary.by_format.items()), ("TOTAL", summary.total)]
    for name, c in rows:
        lines.append(
            f"{name:<17} {c.files:>5} {c.trajectories:>6} {c.steps:>7} {c.eligible:>8} "
            f"{c.quarantined:>11} {c.duplicates:>10} {c.excluded:>8}"
        )
    if summary.passed_over_count:
        shown = summary.passed_over[:PASSED_OVER_SHOWN]
        more = summary.passed_over_count - len(shown)
        lines.append(
            f"passed over {summary.passed_over_count} file(s) that are not trajectory files: "
            + ", ".join(shown)
            + (
                f" and {more} more (ingest_summary.json lists up to {PASSED_OVER_KEPT})"
                if more
                else ""
            )
        )
    if summary.redactions:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(summary.redactions.items()))
        lines.append(f"redacted at ingest: {kinds}")
    return "\n".join(lines)


def watched_lines(summary: IngestSummary) -> list[str]:
    """Warnings for kept trajectories of a shipped evaluation set's instances."""
    from builder.ingest.instances import NAMED_SETS

    lines = []
    for name, ids in sorted(summary.watched.items()):
        if ids:
            shown = ", ".join(sorted(ids)[:3]) + (", ..." if len(ids) > 3 else "")
            lines.append(
                f"kept trajectories of {len(ids)} {NAMED_SETS[name]} instance(s) "
                f"({shown}): a model trained on them is contaminated for that benchmark; "
                f"`exclude_instances: {name}` drops them"
            )
    return lines


def write_summary(summary: IngestSummary, path: Path) -> None:
    """The counts as JSON beside the tables they describe."""
    path.parent.mkdir(parents=True, exist_ok=True)
    by_format = {name: asdict(c) for name, c in sorted(summary.by_format.items())}
    total = asdict(summary.total)
    data: dict[str, object] = {
        "by_format": by_format,
        "total": total,
        "excluded_instances": dict(sorted(summary.excluded_instances.items())),
        "watched_instances": {k: sorted(v) for k, v in sorted(summary.watched.items())},
    }
    if summary.passed_over_count:
        data["passed_over"] = {"count": summary.passed_over_count, "files": summary.passed_over}
    if summary.scrubbed:
        data["redactions"] = dict(sorted(summary.redactions.items()))
    path.write_text(json.dumps(data, indent=2) + "\n")
