"""`nap-builder publish OUT [OUT ...] (--to DIR | --repo ORG/NAME) [--private | --public]
[--dry-run]`.

Settings (splits, licence, seed, scrubbing, visibility wish) come from the run's
`OUT/config.resolved.yaml` when it exists, so a published dataset matches the run that
produced it; with several run folders (rounds, `merge_runs`), from the earliest round's.
`--private` / `--public` override `publish.private` and are the only way an existing repo's
visibility is changed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from builder.errors import PublishError
from builder.publish.folder import read_yaml
from builder.publish.layout import DEFAULT_SPLITS, LayoutSummary, build_dataset_folder
from builder.publish.merge_runs import RunRound, merge_runs, online_rounds
from builder.publish.upload import UploadReport, upload
from builder.scrub import Scrubber

HUB_FOLDER = "hf_dataset"  # where `--repo` stages the folder inside OUT


@dataclass(frozen=True, slots=True)
class PublishSettings:
    splits: dict[str, float]
    license: str
    seed: int
    private: bool | None  # None: new repos private, existing ones unchanged
    scrub: bool
    emails: bool
    license_name: str | None = None
    license_link: str | None = None
    input_licenses: dict[str, str] = field(default_factory=dict)
    tokenizer: str | None = None
    max_tokens: int | None = None
    min_train_fraction: float = 0.5
    min_split_trajectories: int = 5


def read_settings(out_dir: Path) -> PublishSettings:
    """The publish-related keys of the run's resolved config, with defaults when absent."""
    raw = read_yaml(out_dir / "config.resolved.yaml")
    publish = raw.get("publish") or {}
    scrub = raw.get("scrub") or {}
    private = publish.get("private")
    return PublishSettings(
        splits=dict(publish.get("splits") or DEFAULT_SPLITS),
        license=str(publish.get("license") or "unknown"),
        seed=int(raw.get("seed") or 0),
        private=None if private is None else bool(private),
        scrub=bool(scrub.get("enabled", True)),
        emails=bool(scrub.get("emails", False)),
        license_name=publish.get("license_name"),
        license_link=publish.get("license_link"),
        input_licenses={str(k): str(v) for k, v in (publish.get("input_licenses") or {}).items()},
        tokenizer=publish.get("tokenizer"),
        max_tokens=publish.get("max_tokens"),
        min_train_fraction=float(publish.get("min_train_fraction", 0.5)),
        min_split_trajectories=int(publish.get("min_split_trajectories", 5)),
    )


def publish(
    out_dir: Path,
    *,
    more: Sequence[Path] = (),
    to: str | None = None,
    repo: str | None = None,
    private: bool | None = None,
    dry_run: bool = False,
    tokenizer: str | None = None,
    max_tokens: int | None = None,
) -> int:
    """Lay out the dataset (into `to`, or `OUT/hf_dataset` for `repo`) and upload it.

    `more` run folders (other rounds) are merged with `out_dir` first (`merge_runs`).
    `private` is the command line's `--private` (True) / `--public` (False) / neither (None);
    `tokenizer` and `max_tokens` override `publish.tokenizer` / `publish.max_tokens`.
    """
    if (to is None) == (repo is None):
        raise PublishError("publish needs exactly one of --to DIR or --repo ORG/NAME")
    if not out_dir.is_dir():
        raise PublishError(f"{out_dir}: no such run output directory")
    if more:
        with tempfile.TemporaryDirectory() as tmp:
            merged = Path(tmp) / "merged"
            rounds = merge_runs([out_dir, *more], merged)
            return _publish(merged, out_dir, rounds, to, repo, private, dry_run, tokenizer,
                            max_tokens)  # fmt: skip
    return _publish(out_dir, out_dir, online_rounds(out_dir), to, repo, private, dry_run,
                    tokenizer, max_tokens)  # fmt: skip


def _publish(
    source: Path,
    out_dir: Path,
    rounds: list[RunRound],
    to: str | None,
    repo: str | None,
    private: bool | None,
    dry_run: bool,
    tokenizer: str | None,
    max_tokens: int | None,
) -> int:
    """Publish the run folder `source` (`out_dir` itself, or the merge of several, whose
    `--repo` staging folder goes in the first one given)."""
    settings = read_settings(source)
    if tokenizer is not None:
        settings = replace(settings, tokenizer=tokenizer)
    if max_tokens is not None:
        settings = replace(settings, max_tokens=max_tokens)
    if to is not None and dry_run:
        with tempfile.TemporaryDirectory() as tmp:
            summary = _build(
                source, Path(tmp) / "dataset", settings, None, _folder_target(to), rounds
            )
            print("\n".join(_layout_lines(summary, f"would write to {to}", rounds)))
        return 0
    dest = Path(to) if to is not None else out_dir / HUB_FOLDER
    summary = _build(source, dest, settings, repo, repo, rounds)
    print("\n".join(_layout_lines(summary, f"wrote {dest}", rounds)))
    if repo is not None:
        wish = private if private is not None else settings.private
        report = upload(
            dest, repo, private=wish, change_visibility=private is not None, dry_run=dry_run
        )
        print("\n".join(_upload_lines(report)))
    return 0


def _folder_target(path: str) -> str:
    """What the card of a local folder loads: its name, never a local absolute path."""
    return f"./{Path(path).name}"


def _build(
    out_dir: Path,
    dest: Path,
    s: PublishSettings,
    repo: str | None,
    target: str | None,
    rounds: list[RunRound],
) -> LayoutSummary:
    scrubber = Scrubber(emails=s.emails) if s.scrub else Scrubber(rules=())
    dest.mkdir(parents=True, exist_ok=True)
    return build_dataset_folder(
        out_dir, dest, splits=s.splits, license=s.license, license_name=s.license_name,
        license_link=s.license_link, scrubber=scrubber, repo_id=repo, target=target,
        input_licenses=s.input_licenses, seed=s.seed, tokenizer=s.tokenizer,
        max_tokens=s.max_tokens, min_train_fraction=s.min_train_fraction,
        min_split_trajectories=s.min_split_trajectories,
        rounds=[r.as_dict() for r in rounds],
    )  # fmt: skip


def _layout_lines(summary: LayoutSummary, head: str, rounds: list[RunRound]) -> list[str]:
    lines = [f"{head}:"]
    for name, layout in summary.configs.items():
        splits = ", ".join(f"{s} {n}" for s, n in layout.rows.items())
        lines.append(
            f"  {name}: {splits} rows ({sum(len(f) for f in layout.files.values())} files)"
        )
    for r in rounds:
        duplicates = sum(r.duplicates.values())
        lines.append(
            f"  round {r.round} ({r.prefix_mode} prefixes, {r.folder}): "
            f"{r.rows.get('supervision', 0)} supervision rows, "
            f"{r.rows.get('preferences', 0)} preference pairs"
            + (f", {duplicates} duplicates of an earlier round left out" if duplicates else "")
        )
    if summary.redactions:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(summary.redactions.items()))
        lines.append(f"  redacted: {kinds}")
    for name, layout in summary.configs.items():
        dropped = layout.lengths.get("dropped_by_max_tokens") if layout.lengths else None
        if dropped:
            parts = ", ".join(f"{s} {n}" for s, n in dropped.items())
            lines.append(f"  {name}: left out by max_tokens: {parts} rows")
    lines += [f"warning: {w}" for w in summary.warnings]
    return lines


def _upload_lines(report: UploadReport) -> list[str]:
    lines = report.lines()
    if report.visibility is not None and report.visibility.warning:
        lines.append(f"warning: {report.visibility.warning}")
    return lines
