"""Candidate rows: every teacher reply and rule becomes a row, with a reason when unusable."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.errors import ConfigError
from builder.steps.tokens import count_tokens
from builder.teacher.candidates import build_candidates, candidates_from_replies, rule_candidates
from builder.teacher.rules import POOL
from schemas.candidates import CANDIDATE_SCHEMA, CandidateRecord
from schemas.common import from_row, to_table
from schemas.steps import StepRecord
from tests.teacher.rules.real import TEXTSTATS, step_where

CODE = (
    '{"type": "code", "content": ["1-13: session header; 5 passed, test_empty_items failed", '
    '"29-31: summary: 1 failed, 5 passed"]}'
)
PLAIN = (
    '{"type": "plain", "content": "test_empty_items fails: ValueError: max() arg is an empty '
    'sequence at django/contrib/sitemaps/__init__.py:170"}'
)
REPLIES = [
    CODE,
    "I cannot help with that.",
    "```json\n" + json.dumps(json.loads(CODE), indent=2) + "\n```",
    PLAIN,
    '{"type": "code", "content": ["6: blank"]}',
    '{"type": "code", "content": ["30-40: end"]}',
    '{"type": "unchanged"}',
    "Sure: " + PLAIN,
]


def expected(
    step: StepRecord,
    index: int,
    reply: str | None,
    output: str | None,
    reason: str | None,
    rendered: str | None,
    *,
    source: str = "teacher",
    duplicate_of: int | None = None,
) -> CandidateRecord:
    return CandidateRecord(
        trajectory_id="traj-1",
        step_index=3,
        candidate_index=index,
        source=source,
        prompt_version="coact-v1",
        teacher_model="teacher-m" if source == "teacher" else None,
        reply=reply,
        kind=json.loads(output)["type"] if output else None,
        output=output,
        valid=reason is None,
        invalid_reason=reason,
        duplicate_of=duplicate_of,
        rendered=rendered,
        raw_chars=len(step.observation),
        rendered_chars=len(rendered) if rendered is not None else None,
        raw_tokens=count_tokens(step.observation),
        rendered_tokens=count_tokens(rendered) if rendered is not None else None,
    )


def test_teacher_rows_keep_invalid_and_duplicate_replies_with_reasons(step: StepRecord) -> None:
    log = step.observation
    lines = log.split("\n")
    code_render = "\n".join(
        [
            "[output compressed: omitted lines are summarised in parentheses]",
            "(compressed 13 lines: session header; 5 passed, test_empty_items failed)",
            *lines[13:28],
            "(compressed 3 lines: summary: 1 failed, 5 passed)",
        ]
    )
    plain_text = json.loads(PLAIN)["content"]
    plain_render = f"[output compressed: summary of the original output]\n{plain_text}"
    blank_render = "\n".join(
        [
            "[output compressed: omitted lines are summarised in parentheses]",
            *lines[:5],
            "(compressed 1 lines: blank)",
            *lines[6:],
        ]
    )
    rows = candidates_from_replies(
        step, REPLIES, teacher_model="teacher-m", prompt_version="coact-v1"
    )
    assert rows == [
        expected(step, 0, REPLIES[0], CODE, None, code_render),
        expected(step, 1, REPLIES[1], None, "no_json", None),
        expected(step, 2, REPLIES[2], CODE, "duplicate", code_render, duplicate_of=0),
        expected(step, 3, REPLIES[3], PLAIN, None, plain_render),
        expected(
            step,
            4,
            REPLIES[4],
            '{"type": "code", "content": ["6: blank"]}',
            "too_long",
            blank_render,
        ),
        expected(
            step,
            5,
            REPLIES[5],
            '{"type": "code", "content": ["30-40: end"]}',
            "range_out_of_bounds",
            None,
        ),
        expected(step, 6, REPLIES[6], '{"type": "unchanged"}', None, log),
        expected(step, 7, REPLIES[7], PLAIN, "duplicate", plain_render, duplicate_of=3),
    ]
    assert rows[0].rendered_chars is not None and rows[0].rendered_chars < rows[0].raw_chars


def test_rule_rows_follow_teacher_rows_and_dedupe_against_them(step: StepRecord) -> None:
    teacher = candidates_from_replies(
        step, REPLIES, teacher_model="teacher-m", prompt_version="coact-v1"
    )
    rules = rule_candidates(
        step,
        ["unchanged", "head_tail", "dedupe_repeated_lines"],
        len(teacher),
        prompt_version="coact-v1",
        earlier=teacher,
    )
    unchanged = '{"type": "unchanged"}'
    assert rules == [
        expected(
            step,
            8,
            unchanged,
            unchanged,
            "duplicate",
            step.observation,
            source="rule:unchanged",
            duplicate_of=6,
        ),
        expected(step, 9, None, None, "not_applicable", None, source="rule:head_tail"),
        expected(step, 10, None, None, "not_applicable", None, source="rule:dedupe_repeated_lines"),
    ]


def test_a_render_equal_to_an_invalid_candidate_is_not_a_duplicate(step: StepRecord) -> None:
    too_long = '{"type": "code", "content": ["6: blank"]}'
    rows = candidates_from_replies(
        step, [too_long, too_long], teacher_model="teacher-m", prompt_version="coact-v1"
    )
    assert [(r.invalid_reason, r.duplicate_of) for r in rows] == [("too_long", None)] * 2


def test_build_candidates_numbers_teacher_then_rules(
    make_step: Callable[..., StepRecord],
) -> None:
    raw = "\n".join(f"compiling module {i} of 40 ... ok, no warnings emitted" for i in range(40))
    step = make_step(raw)
    rows = build_candidates(
        step,
        ['{"type": "unchanged"}'],
        ["head_tail", "dedupe_repeated_lines"],
        teacher_model="teacher-m",
        prompt_version="coact-v1",
    )
    assert [(r.candidate_index, r.source, r.valid, r.invalid_reason) for r in rows] == [
        (0, "teacher", True, None),
        (1, "rule:head_tail", True, None),
        (2, "rule:dedupe_repeated_lines", True, None),
    ]
    assert rows[1].output == '{"type": "code", "content": ["11-20: middle of the output"]}'
    assert rows[2].output == (
        '{"type": "code", "content": ["2-40: like the line above, other numbers"]}'
    )
    assert rows[1].teacher_model is None and rows[1].reply == rows[1].output


def test_unknown_rule_names_fail_fast(step: StepRecord) -> None:
    with pytest.raises(ConfigError, match="no_such_rule"):
        rule_candidates(step, ["head_tail", "no_such_rule"], prompt_version="coact-v1")


def test_candidate_rows_round_trip_through_parquet(step: StepRecord, tmp_path: Path) -> None:
    rows = candidates_from_replies(
        step, REPLIES, teacher_model="teacher-m", prompt_version="coact-v1"
    )
    path = tmp_path / "candidates.parquet"
    pq.write_table(to_table(rows, CANDIDATE_SCHEMA), path)
    back = pq.read_table(path)
    assert back.schema.equals(CANDIDATE_SCHEMA)
    assert back.schema.metadata == CANDIDATE_SCHEMA.metadata
    assert [from_row(CandidateRecord, r) for r in back.to_pylist()] == rows


def test_the_rule_pool_on_a_real_failing_test_run_names_each_rule_in_its_row() -> None:
    step = step_where(TEXTSTATS, "pytest", "FAILED")
    rows = rule_candidates(step, list(POOL), prompt_version="coact-v1")
    assert [(r.source, r.invalid_reason) for r in rows] == [
        ("rule:head_tail", None),
        ("rule:dedupe_repeated_lines", None),
        ("rule:mask_long_lines", "not_applicable"),
        ("rule:test_failures", None),
        ("rule:repo_frames", "not_applicable"),  # pytest's own traceback style, not Python's
        ("rule:search_by_file", "not_applicable"),
        ("rule:deep_listing", "not_applicable"),
        ("rule:code_outline", "not_applicable"),
    ]
    valid = [r for r in rows if r.valid]
    assert all(r.rendered_chars is not None and r.rendered_chars < r.raw_chars for r in valid)
    shortest = min(valid, key=lambda r: r.rendered_chars or 0)
    assert shortest.source == "rule:test_failures"
