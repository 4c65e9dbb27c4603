"""Whether the run folder's ingest is current, and the discarding of tables that another
ingest or config made: once per (inputs, eligibility), and never a remote copy left vouching
for deleted data."""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from builder import __version__
from builder.config import PipelineConfig
from builder.ingest.parallel import InputSpec, format_summary, run_ingest
from builder.run.shards import NAP_TABLES, read_json, write_json_atomic
from builder.scrub.settings import ScrubSettings
from builder.steps.pairing import EligibilityRules
from builder.storage.inputs import localize_input
from builder.storage.mirror import delete_remote, push_paths
from schemas import SCHEMA_VERSION

log = logging.getLogger(__name__)


def ingest_key(cfg: PipelineConfig) -> dict[str, object]:
    """What an ingest depends on: the inputs, the eligibility rules, the scrub settings, the
    instances excluded, the builder version and the tables' schema version (a run folder
    ingested under an older schema is re-ingested, its NAP tables discarded; cached model
    answers stay free)."""
    key: dict[str, object] = {
        "inputs": [i.model_dump() for i in cfg.inputs],
        "eligibility": cfg.eligibility.model_dump(),
        "scrub": cfg.scrub.model_dump(),  # the tables are written scrubbed (or not)
        "builder": __version__,
        "schema": SCHEMA_VERSION,
    }
    if not cfg.exclude_instances.empty:  # the ids themselves: a file's content counts too
        ids = "\n".join(sorted(cfg.exclude_instances.resolved()))
        key["exclude_instances"] = hashlib.sha256(ids.encode()).hexdigest()
    return key


def ingest_marker(out_dir: Path) -> Path:
    return out_dir / "_state" / "ingest.json"


def ingest_is_current(cfg: PipelineConfig, out_dir: Path) -> bool:
    marker = ingest_marker(out_dir)
    return marker.exists() and read_json(marker) == ingest_key(cfg)


def ingest_into(
    cfg: PipelineConfig, out_dir: Path, ingest: Callable[..., Any] = run_ingest
) -> None:
    """Ingest the config's inputs with its eligibility rules into `out_dir` (`ingest` is
    `run_ingest` or the Ray engine's `RayPool.ingest`)."""
    specs = [  # object-store inputs are read from a local copy
        InputSpec(localize_input(i.path), None if i.format == "auto" else i.format, dict(i.options))
        for i in cfg.inputs
    ]
    rules = EligibilityRules(
        cfg.eligibility.min_tokens,
        cfg.eligibility.require_focus,
        cfg.eligibility.max_observation_chars,
        exclude_instances=cfg.exclude_instances.resolved(),
    )
    summary = ingest(specs, out_dir, rules=rules, scrub=ScrubSettings.of(cfg.scrub))
    log.info("ingest summary:\n%s", format_summary(summary))
    write_json_atomic(ingest_marker(out_dir), ingest_key(cfg))
    # lazy: a local run folder (no store bound) is never walked
    push_paths(out_dir, (p for p in out_dir.rglob("*") if p.is_file()))  # tables, then marker


def ensure_ingested(
    cfg: PipelineConfig, out_dir: Path, ingest: Callable[..., Any] = run_ingest
) -> None:
    """Ingest once per (inputs, eligibility); a change re-ingests and discards NAP tables."""
    if ingest_is_current(cfg, out_dir):
        log.info("ingest: up to date, skipped")
        return
    markers = ["_state/shards", "_state/ingest.json"]  # first: none outlives its tables
    discard(out_dir, [*markers, "trajectories", "steps", "quarantine", *NAP_TABLES])
    ingest_into(cfg, out_dir, ingest)


def discard(out_dir: Path, parts: list[str]) -> None:
    """Remove these folders or files of the run folder, here and on the object store it
    mirrors (if any): one place, so a remote copy is never left vouching for deleted data."""
    for rel in parts:
        path = out_dir / rel
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    delete_remote(out_dir, parts)


def discard_stale(out_dir: Path, digest: str) -> None:
    """NAP tables of another config cannot be mixed with this one's: drop them."""
    marker = out_dir / "_state" / "config.hash"
    previous = marker.read_text().strip() if marker.exists() else None
    if previous is not None and previous != digest:
        log.warning(
            "config changed since the last run in %s (%s → %s): discarding its NAP tables; "
            "the request cache keeps unchanged requests free",
            out_dir,
            previous,
            digest,
        )
        discard(out_dir, ["_state/shards", *NAP_TABLES])
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(digest + "\n")
