"""What to scrub and where: the settings a run's processes (ingest tasks, shard loading) share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ScrubSettings:
    """`at_ingest`: the ingest writes `trajectories` and `steps` already scrubbed (the
    default), so no table of the run folder holds a raw secret and shards need no second
    pass; otherwise the tables keep the raw text and each shard is scrubbed as it is loaded,
    before any model sees it."""

    enabled: bool = True
    emails: bool = False
    at_ingest: bool = True

    @property
    def ingest_scrubs(self) -> bool:
        return self.enabled and self.at_ingest

    @property
    def load_scrubs(self) -> bool:
        return self.enabled and not self.at_ingest

    @classmethod
    def of(cls, config: Any) -> ScrubSettings:
        """From a pipeline config's `scrub` section (`builder.config.run_settings.ScrubConfig`)."""
        return cls(config.enabled, config.emails, not config.raw_tables)
