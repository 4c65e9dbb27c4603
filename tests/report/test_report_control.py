"""The report's `control` section from a real judgements table with control rows."""

from __future__ import annotations

from pathlib import Path

from builder.nap.control import REUSED
from builder.report.build import build_report, write_report
from schemas.judgements import CONTROL_INDEX, JUDGEMENT_SCHEMA, JudgementRecord
from tests.report.test_report import _write


def _row(step: int, cand: int, passed: bool, control: bool = False) -> JudgementRecord:
    index = CONTROL_INDEX if control else cand
    return JudgementRecord("t", step, index, index, "agent", "r", passed=passed, is_control=control)


def test_control_rows_make_their_own_section_and_count_in_no_candidate_figure(
    tmp_path: Path,
) -> None:
    rows = [
        _row(0, 0, True),
        _row(0, 1, False),
        _row(0, 0, True, control=True),
        _row(1, 0, False),
        _row(1, 0, False, control=True),
        _row(2, 0, False),
        _row(2, 0, False, control=True),
    ]
    _write(tmp_path, "judgements", rows, JUDGEMENT_SCHEMA, parts=2)
    report = build_report(tmp_path, control_floor=0.5, control_mode=REUSED)
    control = report["control"]
    assert {k: v for k, v in control.items() if k != "warning"} == {
        "mode": "reused_reference_sample",
        "steps": 3,
        "reproduced": 1,
        "pass_rate": 1 / 3,
        "floor": 0.5,
    }
    assert "1 of 3 steps (33%" in control["warning"]
    totals = report["totals"]
    assert (totals["judged_candidates"], totals["passing_candidates"]) == (4, 1)
    assert totals["steps_with_passing_candidate"] == 1
    assert report["early_exit"]["judged_candidates"] == 4
    write_report(tmp_path, report)
    markdown = (tmp_path / "report.md").read_text()
    assert "control pass rate 33%" in markdown and "> **WARNING:** JUDGE UNRELIABLE" in markdown
    assert build_report(tmp_path, control_floor=0.3)["control"]["warning"] is None
