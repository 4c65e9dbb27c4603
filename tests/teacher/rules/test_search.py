"""Search hits are grouped by file and capped per file."""

from __future__ import annotations

from builder.teacher.render import render
from builder.teacher.rules import cap_matches_per_file
from builder.teacher.rules.search import is_search_command
from tests.teacher.rules.real import SWE_SMITH, TEXTSTATS, step_where


def test_a_file_with_many_matches_keeps_its_first_three() -> None:
    step = step_where(TEXTSTATS, "grep -rn summarize")
    raw = step.observation
    assert is_search_command(step.action)
    out = cap_matches_per_file(raw, step.action)
    assert out is not None
    changelog = [line for line in raw.split("\n") if line.startswith("./docs/changelog.md:")]
    others = [
        line for line in raw.split("\n") if line and not line.startswith("./docs/changelog.md:")
    ]
    assert len(changelog) == 14
    text = render(out, raw).split("\n")
    assert changelog[:3] == [line for line in text if line.startswith("./docs/changelog.md:")]
    assert "(compressed 11 lines: 11 more matches in ./docs/changelog.md)" in text
    assert all(line in text for line in others)  # files with few matches are untouched


def test_recursive_grep_without_line_numbers_is_grouped_by_file() -> None:
    step = step_where(SWE_SMITH, 'grep -r "get_indexer_for"')
    raw = step.observation
    out = cap_matches_per_file(raw, step.action)
    assert out is not None
    text = render(out, raw)
    files = {line.split(":", 1)[0] for line in raw.split("\n") if ":" in line}
    for file in files:  # every file is still named, by a kept hit or its placeholder
        assert file in text
    assert len(text) < len(raw)


def test_single_file_grep_counts_the_matches_it_folds() -> None:
    step = step_where(SWE_SMITH, 'grep -n "freq"')
    raw = step.observation
    hits = [line for line in raw.split("\n") if line[:1].isdigit()]
    out = cap_matches_per_file(raw, step.action)
    assert out is not None
    text = render(out, raw).split("\n")
    assert hits[:3] == [line for line in text if line[:1].isdigit()]
    assert f"(compressed {len(hits) - 3} lines: {len(hits) - 3} more matches)" in text


def test_not_applicable_to_few_matches_or_to_other_output() -> None:
    few = step_where(SWE_SMITH, 'grep -r "def loc"')
    assert cap_matches_per_file(few.observation, few.action) is None
    pytest_run = step_where(TEXTSTATS, "pytest")
    assert cap_matches_per_file(pytest_run.observation, pytest_run.action) is None
