"""The run report computed from small, hand-built Parquet tables with the real schemas."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.report.build import build_report, scan_table, write_report
from builder.report.markdown import percent_change, render_markdown, summary_line
from builder.report.plots import tokens_saved_per_trajectory
from builder.report.savings import tokens_saved
from builder.run.finish import finish_report
from builder.run.result import RunResult
from schemas.candidates import CANDIDATE_SCHEMA, CandidateRecord
from schemas.common import to_table
from schemas.judgements import JUDGEMENT_SCHEMA, JudgementRecord
from schemas.preferences import PREFERENCE_SCHEMA, PreferenceRecord
from schemas.quarantine import QUARANTINE_SCHEMA, QuarantineRecord
from schemas.references import REFERENCE_SCHEMA, ReferenceRecord
from schemas.steps import STEP_SCHEMA, Action, StepRecord
from schemas.supervision import SUPERVISION_SCHEMA, SupervisionRecord
from schemas.trajectories import TRAJECTORY_SCHEMA, TrajectoryRecord


def _write(out: Path, table: str, records: list, schema, parts: int = 1) -> None:
    folder = out / table
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-len(records) // parts)
    for i in range(parts):
        chunk = records[i * size : (i + 1) * size]
        pq.write_table(to_table(chunk, schema), folder / f"part-{i:04d}.parquet")


def _step(tid: str, index: int, tokens: int, reason: str | None) -> StepRecord:
    action = Action("bash", "{}", "cat a.py", "cat a.py")
    return StepRecord(
        tid,
        index,
        2 * index,
        2 * index + 1,
        "mini-swe-agent",
        "mini-swe-agent",
        action=action,
        observation="x",
        observation_tokens=tokens,
        eligible=reason is None,
        ineligible_reason=reason,
    )


def _cand(
    tid: str,
    step: int,
    index: int,
    *,
    rendered: int | None = None,
    invalid: str | None = None,
    source: str = "teacher",
    duplicate_of: int | None = None,
) -> CandidateRecord:
    return CandidateRecord(
        tid,
        step,
        index,
        source,
        "v1",
        "teacher-model",
        "{}",
        "plain",
        "{}",
        invalid is None,
        invalid,
        duplicate_of,
        "text",
        4000,
        4 * (rendered or 0),
        1000,
        rendered,
    )


def _judge(tid: str, step: int, cand: int, order: int, passed: bool, attempts: int = 1):
    return JudgementRecord(
        tid,
        step,
        cand,
        order,
        "agent",
        "reply",
        attempts=attempts,
        aggregate=0.9 if passed else 0.1,
        passed=passed,
    )


def _ref(tid: str, step: int, index: int, command: str | None, logged: float | None):
    action = Action("bash", "{}", command, command) if command is not None else None
    return ReferenceRecord(
        tid,
        step,
        index,
        "sampled",
        "agent",
        "reply",
        action=action,
        format_error=action is None,
        similarity_to_logged=logged,
    )


def _sup(tid: str, step: int, cand: int, rank: int, rendered: int) -> SupervisionRecord:
    return SupervisionRecord(
        tid,
        step,
        cand,
        rank,
        "teacher" if cand != 4 else "rule:head",
        "sys",
        "prompt",
        "{}",
        raw_chars=4000,
        rendered_chars=4 * rendered,
        raw_tokens=1000,
        rendered_tokens=rendered,
    )


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    trajectories = [
        TrajectoryRecord(
            tid, "mini-swe-agent", f"/{tid}.json", 0, None, "mini", None, None, "task", None, None
        )
        for tid in ("t1", "t2")
    ]
    _write(out, "trajectories", trajectories, TRAJECTORY_SCHEMA)
    _write(
        out,
        "quarantine",
        [QuarantineRecord("/bad.json", None, None, "wrong_shape", "bad")],
        QUARANTINE_SCHEMA,
    )
    steps = [
        _step("t1", 0, 1000, None),
        _step("t1", 1, 500, None),
        _step("t1", 2, 10, "last_step"),
        _step("t2", 0, 800, None),
        _step("t2", 1, 400, None),
        _step("t2", 2, 300, None),
        _step("t2", 3, 50, "below_threshold"),
    ]
    _write(out, "steps", steps, STEP_SCHEMA, parts=2)
    candidates = [
        _cand("t1", 0, 0, rendered=200),
        _cand("t1", 0, 1, rendered=400),
        _cand("t1", 0, 2, invalid="invalid_json"),
        _cand("t1", 0, 3, rendered=200, duplicate_of=0),
        _cand("t1", 0, 4, rendered=300, source="rule:head"),
        _cand("t1", 0, 5, rendered=700),
        _cand("t1", 1, 0, invalid="bad_ranges"),
        _cand("t1", 1, 1, invalid="invalid_json"),
        _cand("t2", 0, 0, rendered=100),
        _cand("t2", 0, 1, rendered=600),
        _cand("t2", 2, 0, rendered=150),
    ]
    _write(out, "candidates", candidates, CANDIDATE_SCHEMA, parts=3)
    judgements = [
        _judge("t1", 0, 0, 0, True),
        _judge("t1", 0, 4, 1, True),
        _judge("t1", 0, 1, 2, False, attempts=2),
        _judge("t2", 0, 0, 0, False),
        _judge("t2", 0, 1, 1, False),
    ]
    _write(out, "judgements", judgements, JUDGEMENT_SCHEMA)
    references = [
        _ref("t1", 0, 0, "cat  a.py", 1.0),
        _ref("t1", 0, 1, "cat a.py\n", 1.0),
        _ref("t1", 0, 2, "ls", 0.2),
        _ref("t2", 0, 0, "grep x", 0.5),
        _ref("t2", 0, 1, None, None),
        _ref("t2", 2, 0, "pytest", None),
        _ref("t2", 2, 1, "pytest", None),
    ]
    _write(out, "references", references, REFERENCE_SCHEMA)
    _write(
        out, "supervision", [_sup("t1", 0, 0, 0, 200), _sup("t1", 0, 4, 1, 300)], SUPERVISION_SCHEMA
    )
    preferences = [
        PreferenceRecord("t1", 0, c, 1, "sys", "p", "a", "b", 0.9, 0.1, "v1") for c in (0, 4)
    ]
    _write(out, "preferences", preferences, PREFERENCE_SCHEMA)
    (out / "candidates" / ".tmp-123-part-0009.parquet").write_bytes(b"half-written")
    return out


def test_totals_count_every_stage_and_every_reason(out_dir: Path) -> None:
    totals = build_report(out_dir)["totals"]
    assert totals == {
        "trajectories": 2,
        "quarantined": 1,
        "quarantined_by_kind": {"wrong_shape": 1},
        "steps": 7,
        "eligible_steps": 5,
        "ineligible_by_reason": {"below_threshold": 1, "last_step": 1},
        "candidates": 11,
        "valid_candidates": 8,
        "invalid_by_reason": {"invalid_json": 2, "bad_ranges": 1},
        "duplicate_candidates": 1,
        "judged_candidates": 5,
        "agent_format_errors": 0,
        "passing_candidates": 2,
        "steps_with_passing_candidate": 1,
        "selected_rows": 2,
        "fallback_rows": 0,
        "selected_steps": 1,
        "preference_pairs": 2,
    }


def test_dropped_steps_are_explained_by_the_first_empty_stage(out_dir: Path) -> None:
    dropped = build_report(out_dir)["dropped_steps"]
    assert dropped == {
        "total": 4,
        "no_candidates": 1,
        "no_passing_candidate": 1,
        "no_valid_candidate": 1,
        "not_judged": 1,
    }


def test_compression_compares_raw_and_shortest_selected_tokens(out_dir: Path) -> None:
    compression = build_report(out_dir)["compression"]
    assert compression["raw_tokens"] == 1000
    assert compression["selected_tokens"] == 200
    assert compression["tokens_saved"] == 800
    assert compression["token_ratio"] == pytest.approx(0.2)
    assert compression["raw_chars"] == 4000 and compression["selected_chars"] == 800
    assert compression["observation_tokens_all_steps"] == 3060
    assert compression["share_of_observation_tokens_saved"] == pytest.approx(800 / 3060)
    dist = compression["ratio_distribution"]
    assert dist["count"] == 2
    assert dist["mean"] == pytest.approx(0.25)
    assert dist["p50"] == pytest.approx(0.25)
    assert dist["p10"] == pytest.approx(0.21)
    assert (dist["min"], dist["max"]) == (pytest.approx(0.2), pytest.approx(0.3))


def test_by_source_separates_teacher_and_rules(out_dir: Path) -> None:
    by_source = build_report(out_dir)["by_source"]
    assert by_source == {
        "rule:head": {"candidates": 1, "valid": 1, "judged": 1, "passed": 1, "selected": 1},
        "teacher": {"candidates": 10, "valid": 7, "judged": 4, "passed": 1, "selected": 1},
    }


def test_reference_stability_counts_equal_pairs_after_whitespace_collapse(out_dir: Path) -> None:
    stability = build_report(out_dir)["reference_stability"]
    assert stability["references"] == 7
    assert stability["reference_format_errors"] == 1
    assert stability["steps_with_reference_pairs"] == 2
    assert stability["same_command_rate_mean"] == pytest.approx((1 / 3 + 1) / 2)
    assert stability["same_command_rate_pooled"] == pytest.approx(2 / 4)
    assert stability["similarity_to_logged_mean"] == pytest.approx((1 + 1 + 0.2 + 0.5) / 4)
    assert stability["similarity_to_logged_is_1"] == pytest.approx(0.5)


def test_early_exit_counts_valid_unique_candidates_left_unjudged(out_dir: Path) -> None:
    early = build_report(out_dir)["early_exit"]
    assert early == {
        "judgeable_candidates": 6,
        "judged_candidates": 5,
        "judgements_saved": 1,
        "agent_requests_for_judgements": 6,
    }


def test_usage_and_extra_are_merged_into_the_report(out_dir: Path) -> None:
    teacher = {"requests": 30, "cache_hits": 10, "cache_misses": 30, "cost_usd": 0.125}
    usage = {"stages": {"teacher": teacher, "agent": {"requests": 0}}, "total": teacher}
    extra = {
        "reference_stability": {"semantic_agreement": 0.9},
        "elapsed_s": 12.5,
        "out_dir": out_dir,
    }
    report = build_report(out_dir, usage=usage, extra=extra)
    assert report["usage"]["total"]["cache_hit_rate"] == pytest.approx(0.25)
    assert report["usage"]["stages"]["teacher"]["cache_hit_rate"] == pytest.approx(0.25)
    assert "cache_hit_rate" not in report["usage"]["stages"]["agent"]
    assert report["reference_stability"]["semantic_agreement"] == 0.9
    assert report["reference_stability"]["references"] == 7
    assert report["elapsed_s"] == 12.5
    assert report["out_dir"] == str(out_dir)
    markdown = render_markdown(report)
    assert "## other figures" in markdown and "| elapsed s | 12.5000 |" in markdown
    assert "| teacher | 30 | 10 | 30 | 0.1250 | 0.2500 |" in markdown


def test_written_report_round_trips_and_markdown_shows_the_numbers(out_dir: Path) -> None:
    usage = {"requests": 30, "by_model": {"gpt-x": {"requests": 30, "cost_usd": 0.125}}}
    report = build_report(out_dir, usage=usage)
    json_path, md_path = write_report(out_dir, report)
    assert json.loads(json_path.read_text()) == report
    markdown = md_path.read_text()
    assert "| eligible steps | 5 |" in markdown
    assert "| tokens saved | 800 |" in markdown
    assert "| token ratio | 0.2000 |" in markdown
    assert "| no valid candidate | 1 |" in markdown
    assert "| gpt-x | 30 | 0.1250 |" in markdown
    assert "| rule:head | 1 | 1 | 1 | 1 | 1 |" in markdown


def test_an_empty_output_folder_gives_a_zero_report(tmp_path: Path) -> None:
    report = build_report(tmp_path)
    assert report["totals"]["steps"] == 0
    assert report["totals"]["trajectories"] == 0
    assert report["dropped_steps"] == {"total": 0}
    assert report["compression"]["token_ratio"] is None
    assert report["compression"]["ratio_distribution"] == {"count": 0}
    assert report["reference_stability"]["same_command_rate_mean"] is None
    json_path, md_path = write_report(tmp_path, report)
    assert json.loads(json_path.read_text()) == report
    assert "| steps | 0 |" in md_path.read_text()


def test_scan_table_ignores_hidden_temp_files(out_dir: Path) -> None:
    assert scan_table(out_dir, "candidates").collect().height == 11


def test_summary_line_gives_the_headline_figures(out_dir: Path) -> None:
    report = build_report(out_dir, usage={"cost_usd": 0.5})
    line = summary_line(report)
    assert line == (
        "2 trajectories, 5 eligible steps, 11 candidates (8 valid, 2 passing), "
        "1 steps selected (4 dropped), tokens -80.0% on selected steps, cost $0.5000."
    )
    assert line in render_markdown(report)


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (0.004, "-99.6%"),  # not "-100%"
        (0.0004, "-99.9%"),  # -99.96% would round to -100.0%
        (0.0, "-100.0%"),
        (0.2, "-80.0%"),
        (0.6663, "-33.4%"),
        (1.0, "+0.0%"),
        (0.99999, "-<0.1%"),
        (1.25, "+25.0%"),
    ],
)
def test_headline_change_keeps_one_decimal_and_never_overstates(ratio: float, shown: str) -> None:
    assert percent_change(ratio) == shown


def test_summary_line_does_not_round_a_near_total_saving_to_100(tmp_path: Path) -> None:
    rows = [_sup("t1", 0, 0, 0, 4)]  # 1000 -> 4 tokens: -99.6%
    _write(tmp_path, "supervision", rows, SUPERVISION_SCHEMA)
    assert "tokens -99.6% on selected steps" in summary_line(build_report(tmp_path))


def test_tokens_saved_has_one_definition_for_progress_report_and_plots(tmp_path: Path) -> None:
    rows = [
        _sup("t1", 0, 0, 0, 200),  # best row of its step: saves 800
        _sup("t1", 0, 4, 1, 300),  # a second target of the same step: no extra saving
        _sup("t2", 0, 1, 0, 900),  # saves 100
        dataclasses.replace(_sup("t2", 1, -1, 0, 1000), is_fallback=True),  # saves nothing
    ]
    _write(tmp_path, "supervision", rows, SUPERVISION_SCHEMA)
    report = build_report(tmp_path)
    per_trajectory = tokens_saved_per_trajectory(tmp_path)
    assert tokens_saved(rows) == report["compression"]["tokens_saved"] == 900
    assert per_trajectory == {"t1": 800, "t2": 100}
    progress = 0
    for step in ({"t1"}, {"t2"}):  # the progress line adds up step results as they arrive
        progress += tokens_saved([r for r in rows if r.trajectory_id in step])
    assert progress == 900


def test_finished_report_carries_the_run_time_including_the_report_stage(
    out_dir: Path,
) -> None:
    result = RunResult(out_dir, shards_total=1, shards_done=1)
    result.stage_seconds["nap"] = 1.5
    started = time.perf_counter() - 2.0  # the run began two seconds ago
    report = finish_report(out_dir, result, started)
    written = json.loads((out_dir / "report.json").read_text())
    assert written["run"]["seconds"] == report["run"]["seconds"] == result.seconds
    assert result.seconds >= 2.0
    assert 0.0 < written["run"]["stage_seconds"]["report"] <= result.seconds - 2.0
    assert written["run"]["stage_seconds"]["nap"] == 1.5
    assert "report" not in written["run"]
    markdown = (out_dir / "report.md").read_text()
    assert f"| seconds | {result.seconds:.4f} |" in markdown
