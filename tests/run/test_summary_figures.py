"""The end-of-run summary: every figure it prints is the figure of report.json it names, and the
training rows are among them (it once looked up keys the report never had, and printed none)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.cli import main
from builder.run.result import SUMMARY_TOTALS
from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config


def test_every_printed_figure_is_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    with nap_server() as server:
        config = tmp_path / "run.yaml"
        extra = {
            "exclude_instances": ["textstats__one-decimal"],
            "selection": {"fallback": "unchanged"},
        }
        config.write_text(run_config(SAMPLES, server.base_url, out, **extra))
        assert main(["run", str(config)]) == 0
    printed = capsys.readouterr().out.splitlines()
    report = json.loads((out / "report.json").read_text())
    totals, run = report["totals"], report["run"]
    figures = dict(line.split(": ", 1) for line in printed if ": " in line)
    for key in SUMMARY_TOTALS:  # under the report's own names, training rows included
        assert figures[key] == str(totals[key]), key
    assert int(figures["selected_rows"]) + int(figures["fallback_rows"]) > 0
    shards = re.fullmatch(
        r"(\d+)/(\d+) complete \((\d+) resumed, (\d+) failed\)", figures["shards"]
    )
    assert shards is not None
    done, total, resumed, failed = map(int, shards.groups())
    assert (done, total) == (run["shards_done"] + run["shards_skipped"], run["shards_total"])
    assert (resumed, failed) == (run["shards_skipped"], run["shards_failed"])
    assert figures["time"] == f"{run['seconds']:.1f} s"
    decontamination = report["decontamination"]
    assert figures["excluded_trajectories"] == (
        f"{decontamination['excluded_trajectories']} (exclude_instances: 1 listed id(s))"
    )
    assert decontamination["excluded_trajectories"] == 1
    control = report["control"]
    assert figures["control"] == (
        f"agent reproduced its reference on {control['reproduced']}/{control['steps']} raw "
        f"observations ({control['pass_rate']:.0%})"
    )
    assert figures["run output"] == str(out) and figures["report"] == str(out / "report.md")
    unchecked = set(figures) - {*SUMMARY_TOTALS, "shards", "time", "excluded_trajectories",
                                "control", "run output", "report"}  # fmt: skip
    assert unchecked == set()  # a figure added later must be checked here too
