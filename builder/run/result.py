"""The outcome of `nap-builder run`, as the CLI prints it and the report records it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Figures of report.json's `totals` the console prints, under the report's own names: the
# training rows are `selected_rows` (+ `fallback_rows`, `unchanged` targets) and pairs.
SUMMARY_TOTALS = (
    "trajectories",
    "eligible_steps",
    "candidates",
    "passing_candidates",
    "selected_rows",
    "fallback_rows",
    "preference_pairs",
)


def round_lines(section: dict[str, Any] | None) -> list[str]:
    """The online round in a line or two: its context, and the deployed compressor's rate."""
    if not section:
        return []
    how = section["prefix_mode"]
    if section.get("prefix_compressor"):
        how += f" by {section['prefix_compressor']}"
    lines = [
        f"round {section['round']} ({how} prefixes): {section['relabelled_steps']} steps "
        f"relabelled, {section['skipped_steps']} skipped"
    ]
    deployed = section.get("deployed")
    if deployed and deployed.get("pass_rate") is not None:
        lines.append(
            f"deployed compressor: passed the gate on {deployed['passed_steps']}/"
            f"{deployed['judged_steps']} steps it changed ({deployed['pass_rate']:.0%})"
        )
    return lines


@dataclass
class RunResult:
    out_dir: Path
    shards_total: int = 0
    shards_done: int = 0
    shards_skipped: int = 0
    shards_failed: int = 0
    shards_deferred: int = 0  # in the last pass: waiting for batch answers
    batch_rounds: int = 0
    stopped: str | None = None  # interrupted | budget
    stop_detail: str | None = None  # what a signal really did, in words
    diagnoses: list[str] = field(default_factory=list)  # endpoints whose requests all failed
    report: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.stopped == "interrupted":
            return 130
        if self.stopped == "budget" or self.shards_failed:
            return 3
        return 0

    def summary_text(self) -> str:
        totals = self.report.get("totals", {})
        lines = [
            f"run output: {self.out_dir}",
            f"shards: {self.shards_done + self.shards_skipped}/{self.shards_total} complete "
            f"({self.shards_skipped} resumed, {self.shards_failed} failed)",
            f"time: {self.seconds:.1f} s",
        ]
        for key in SUMMARY_TOTALS:
            if key in totals:
                lines.append(f"{key}: {totals[key]}")
        decontamination = self.report.get("decontamination", {})
        if decontamination.get("excluded_trajectories"):
            lines.append(
                f"excluded_trajectories: {decontamination['excluded_trajectories']} "
                f"(exclude_instances: {decontamination['exclude_instances']})"
            )
        if self.batch_rounds:
            lines.append(f"batch rounds: {self.batch_rounds}")
        lines += round_lines(self.report.get("round"))
        control = self.report.get("control", {})
        if control.get("pass_rate") is not None:
            lines.append(
                f"control: agent reproduced its reference on {control['reproduced']}/"
                f"{control['steps']} raw observations ({control['pass_rate']:.0%})"
            )
        if control.get("warning"):
            lines.append(f"WARNING: {control['warning']}")
        if decontamination.get("warning"):
            lines.append(f"WARNING: {decontamination['warning']}")
        lines += [f"ERROR: {line}" for line in self.diagnoses]
        if self.stopped:
            why = self.stop_detail or self.stopped
            lines.append(f"stopped early: {why}; run the same command again to resume")
        elif self.stop_detail:
            lines.append(self.stop_detail)
        lines.append(f"report: {self.out_dir / 'report.md'}")
        return "\n".join(lines)
