"""Scrubbing at ingest: trajectories (and so the steps built from them) and quarantine messages
are written with every detected credential redacted (`builder.scrub`), counted per kind in
the ingest summary. Off (`ScrubSettings.at_ingest` false, or scrubbing disabled), records
pass unchanged and the run scrubs each shard when it loads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from builder.scrub.settings import ScrubSettings
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord

if TYPE_CHECKING:
    from builder.ingest.summary import IngestSummary
    from builder.scrub import Scrubber


@dataclass
class IngestScrubber:
    scrubber: Scrubber | None

    @classmethod
    def start(cls, settings: ScrubSettings) -> IngestScrubber:
        if not settings.ingest_scrubs:
            return cls(None)
        from builder.scrub import Scrubber  # ~75 ms to import: only where ingest scrubs

        return cls(Scrubber(emails=settings.emails))

    def trajectory(self, record: TrajectoryRecord) -> TrajectoryRecord:
        """The record as it is stored: task, prompts, metadata and every message scrubbed
        (ids and paths kept, so rows still join)."""
        return record if self.scrubber is None else self.scrubber.scrub_trajectory(record)

    def quarantine(self, row: QuarantineRecord) -> QuarantineRecord:
        """A quarantine message can quote a value from the file: scrubbed too."""
        if self.scrubber is None:
            return row
        message = self.scrubber.scrub(row.message)
        return row if message == row.message else dataclasses.replace(row, message=message)

    def finish(self, summary: IngestSummary) -> None:
        """Hand the redaction counts to the summary (merged across tasks by the parent)."""
        summary.scrubbed = self.scrubber is not None
        if self.scrubber is not None:
            summary.add_redactions(self.scrubber.counts)
