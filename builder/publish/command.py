"""`nap-builder publish OUT (--to DIR | --repo ORG/NAME) [--private] [--dry-run]`.

Settings (splits, licence, seed, scrubbing) come from the run's `OUT/config.resolved.yaml` when
it exists, so a published dataset matches the run that produced it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from builder.errors import PublishError
from builder.publish.layout import DEFAULT_SPLITS, LayoutSummary, build_dataset_folder
from builder.publish.upload import UploadReport, upload
from builder.scrub import Scrubber

HUB_FOLDER = "hf_dataset"  # where `--repo` stages the folder inside OUT


@dataclass(frozen=True, slots=True)
class PublishSettings:
    splits: dict[str, float]
    license: str
    seed: int
    private: bool
    scrub: bool
    emails: bool


def read_settings(out_dir: Path) -> PublishSettings:
    """The publish-related keys of the run's resolved config, with defaults when absent."""
    path = out_dir / "config.resolved.yaml"
    raw: dict[str, Any] = {}
    if path.is_file():
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        raw = loaded if isinstance(loaded, dict) else {}
    publish = raw.get("publish") or {}
    scrub = raw.get("scrub") or {}
    return PublishSettings(
        splits=dict(publish.get("splits") or DEFAULT_SPLITS),
        license=str(publish.get("license") or "mit"),
        seed=int(raw.get("seed") or 0),
        private=bool(publish.get("private", True)),
        scrub=bool(scrub.get("enabled", True)),
        emails=bool(scrub.get("emails", False)),
    )


def publish(
    out_dir: Path,
    *,
    to: str | None = None,
    repo: str | None = None,
    private: bool = False,
    dry_run: bool = False,
) -> int:
    """Lay out the dataset (into `to`, or `OUT/hf_dataset` for `repo`) and upload it."""
    if (to is None) == (repo is None):
        raise PublishError("publish needs exactly one of --to DIR or --repo ORG/NAME")
    if not out_dir.is_dir():
        raise PublishError(f"{out_dir}: no such run output directory")
    settings = read_settings(out_dir)
    if to is not None and dry_run:
        with tempfile.TemporaryDirectory() as tmp:
            summary = _build(out_dir, Path(tmp) / "dataset", settings, None)
            print("\n".join(_layout_lines(summary, f"would write to {to}")))
        return 0
    dest = Path(to) if to is not None else out_dir / HUB_FOLDER
    summary = _build(out_dir, dest, settings, repo)
    print("\n".join(_layout_lines(summary, f"wrote {dest}")))
    if repo is not None:
        report = upload(dest, repo, private=private or settings.private, dry_run=dry_run)
        print("\n".join(_upload_lines(report)))
    return 0


def _build(out_dir: Path, dest: Path, s: PublishSettings, repo: str | None) -> LayoutSummary:
    scrubber = Scrubber(emails=s.emails) if s.scrub else Scrubber(rules=())
    dest.mkdir(parents=True, exist_ok=True)
    return build_dataset_folder(
        out_dir, dest, splits=s.splits, license=s.license, scrubber=scrubber,
        repo_id=repo, seed=s.seed,
    )  # fmt: skip


def _layout_lines(summary: LayoutSummary, head: str) -> list[str]:
    lines = [f"{head}:"]
    for name, layout in summary.configs.items():
        splits = ", ".join(f"{s} {n}" for s, n in layout.rows.items())
        lines.append(
            f"  {name}: {splits} rows ({sum(len(f) for f in layout.files.values())} files)"
        )
    if summary.redactions:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(summary.redactions.items()))
        lines.append(f"  redacted: {kinds}")
    return lines


def _upload_lines(report: UploadReport) -> list[str]:
    return report.lines()
