"""Test-run outputs keep failures and summaries; passing lines and setup noise are folded."""

from __future__ import annotations

import re

from builder.teacher.render import render
from builder.teacher.rules import fold_passing_tests
from builder.teacher.rules.testruns import is_test_command, looks_like_test_run
from tests.teacher.conftest import PYTEST_LOG, make_step
from tests.teacher.rules.real import DJANGO, TEXTSTATS, step_where


def omitted_lines(raw: str, ranges) -> set[int]:  # type: ignore[no-untyped-def]
    return {n for r in ranges for n in range(r.start, r.end + 1)}


def test_failing_pytest_run_keeps_the_whole_failure_section_and_the_summary() -> None:
    step = step_where(TEXTSTATS, "pytest", "FAILED")
    raw = step.observation
    out = fold_passing_tests(raw, step.action)
    assert out is not None and is_test_command(step.action)
    lines = raw.split("\n")
    gone = omitted_lines(raw, out.ranges)
    start = next(i for i, line in enumerate(lines, 1) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines, 1) if "short test summary info" in line)
    failure_lines = [n for n in range(start, end) if "Warning" not in lines[n - 1]]
    assert not gone & set(failure_lines)  # every traceback line of the failure stays
    kept = [lines[n - 1] for n in range(1, len(lines) + 1) if n not in gone]
    assert any("FAILED tests/test_stats.py::test_summarize_empty_text" in k for k in kept)
    assert any(re.search(r"\.\.\.\.F\.\.\.", k) for k in kept)  # the progress line with the F
    # the three all-passing progress lines and the ten warning lines are folded
    passing = [
        n for n, line in enumerate(lines, 1) if re.fullmatch(r"tests/\S+ \.+\s+\[.*\]", line)
    ]
    warnings = [n for n, line in enumerate(lines, 1) if "PytestWarning" in line]
    assert len(passing) == 3 and len(warnings) == 10
    assert set(passing) | set(warnings) <= gone
    text = render(out, raw)
    assert "(compressed 3 lines: progress of 27 passing tests)" in text
    assert "10 warnings (PytestWarning)" in text
    assert len(text) < len(raw)


def test_passing_pytest_run_keeps_its_final_count() -> None:
    step = step_where(TEXTSTATS, "pytest", "38 passed")
    out = fold_passing_tests(step.observation, step.action)
    assert out is not None
    text = render(out, step.observation)
    final = next(line for line in step.observation.split("\n") if "38 passed" in line)
    assert final in text.split("\n")
    assert "progress of 36 passing tests" in text  # 4 lines of 9 dots


def test_django_runtests_folds_database_setup_and_keeps_ran_and_ok() -> None:
    step = step_where(DJANGO, "python3 tests/runtests.py")
    raw = step.observation
    out = fold_passing_tests(raw, step.action)
    assert out is not None and is_test_command(step.action)
    text = render(out, raw).split("\n")
    assert "Ran 60 tests in 0.733s" in text and "OK" in text
    database = sum("test database for alias" in line for line in raw.split("\n"))
    assert database == 16
    assert not any("test database for alias" in line for line in text)
    assert "System check identified no issues (0 silenced)." in text


def test_verbose_passed_lines_fold_and_failed_lines_stay(log: str) -> None:
    out = fold_passing_tests(log, make_step(log).action)
    assert out is not None
    text = render(out, log)
    assert (
        "tests/test_sitemaps.py::test_empty_items FAILED                           [ 50%]" in text
    )
    assert "PASSED" not in text
    assert "(compressed 2 lines: 2 passing tests)" in text
    assert "(compressed 3 lines: 3 passing tests)" in text


def test_not_applicable_to_other_commands_or_runs_without_noise() -> None:
    grep = step_where(TEXTSTATS, "grep -rn")
    assert not is_test_command(grep.action) and not looks_like_test_run(grep.observation)
    assert fold_passing_tests(grep.observation, grep.action) is None
    step = make_step("ERROR: file or directory not found: tests/test_x.py\n\nno tests ran in 0.01s")
    assert fold_passing_tests(step.observation, step.action) is None
    assert looks_like_test_run(PYTEST_LOG)


def test_unittest_verbose_ok_lines_fold_and_failures_stay() -> None:
    oks = [f"test_case_{i} (sitemaps_tests.test_http.HTTPSitemapTests) ... ok" for i in range(12)]
    raw = "\n".join(
        [
            *oks[:6],
            "test_empty (sitemaps_tests.test_http.HTTPSitemapTests) ... FAIL",
            *oks[6:],
            "",
            "=" * 70,
            "FAIL: test_empty (sitemaps_tests.test_http.HTTPSitemapTests)",
            "-" * 70,
            "AssertionError: None != datetime(2013, 3, 13)",
            "",
            "Ran 13 tests in 0.120s",
            "",
            "FAILED (failures=1)",
        ]
    )
    step = make_step(raw)
    out = fold_passing_tests(raw, step.action)
    assert out is not None
    text = render(out, raw).split("\n")
    assert "(compressed 6 lines: 6 passing tests)" in text
    assert text.count("(compressed 6 lines: 6 passing tests)") == 2
    kept = [line for line in raw.split("\n") if " ... ok" not in line]
    assert all(line in text for line in kept)
