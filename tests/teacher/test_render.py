"""Validation and rendering of compressor outputs against the raw text."""

from __future__ import annotations

import pytest

from builder.steps.observation import number_lines
from builder.teacher.output import CompressorOutput, OmittedRange
from builder.teacher.render import (
    CODE_MARKER,
    PLAIN_MARKER,
    line_count,
    render,
    render_checked,
    validate,
)

SMALL = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta"


def code(*ranges: tuple[int, int, str]) -> CompressorOutput:
    return CompressorOutput("code", ranges=tuple(OmittedRange(*r) for r in ranges))


def test_unchanged_renders_the_raw_text(log: str) -> None:
    assert render(CompressorOutput("unchanged"), log) == log
    assert validate(CompressorOutput("unchanged"), log) is None


def test_plain_renders_marker_then_summary(log: str) -> None:
    out = CompressorOutput("plain", text="6 tests: 5 passed, test_empty_items failed")
    assert render(out, log) == (
        "[output compressed: summary of the original output]\n"
        "6 tests: 5 passed, test_empty_items failed"
    )


def test_code_keeps_other_lines_verbatim_and_summarises_ranges() -> None:
    out = code((2, 3, "greek letters"), (6, 6, ""), (8, 8, "last"))
    assert render(out, SMALL) == (
        "[output compressed: omitted lines are summarised in parentheses]\n"
        "alpha\n"
        "(compressed 2 lines: greek letters)\n"
        "delta\n"
        "epsilon\n"
        "(compressed 1 lines)\n"
        "eta\n"
        "(compressed 1 lines: last)"
    )


def test_code_on_a_pytest_log_keeps_the_failure(log: str) -> None:
    out = code((1, 13, "session header; 5 PASSED, test_empty_items FAILED"), (29, 31, "summary"))
    rendered = render(out, log)
    lines = log.split("\n")
    assert rendered.split("\n") == [
        CODE_MARKER,
        "(compressed 13 lines: session header; 5 PASSED, test_empty_items FAILED)",
        *lines[13:28],
        "(compressed 3 lines: summary)",
    ]
    assert validate(out, log) is None


def test_adjacent_ranges_and_whole_output_are_allowed(log: str) -> None:
    assert validate(code((1, 13, "a"), (14, 15, "b")), log) is None
    assert render(code((1, 8, "all")), SMALL) == f"{CODE_MARKER}\n(compressed 8 lines: all)"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (code((5, 6, "b"), (1, 2, "a")), "unsorted_ranges"),
        (code((1, 4, "a"), (4, 6, "b")), "overlapping_ranges"),
        (code((1, 4, "a"), (2, 3, "b")), "overlapping_ranges"),
        (code((0, 2, "a")), "range_out_of_bounds"),
        (code((7, 9, "a")), "range_out_of_bounds"),
        (code((5, 3, "a")), "bad_range"),
        (code(), "empty_content"),
        (CompressorOutput("plain", text="  "), "empty_content"),
        (code((2, 2, "a much longer summary than the word beta")), "too_long"),
        (CompressorOutput("plain", text="x" * len(SMALL)), "too_long"),
    ],
)
def test_invalid_outputs_give_a_reason(output: CompressorOutput, reason: str) -> None:
    assert validate(output, SMALL) == reason


def test_structurally_bad_outputs_cannot_be_rendered() -> None:
    assert render_checked(code((7, 9, "a")), SMALL) == (None, "range_out_of_bounds")
    with pytest.raises(ValueError, match="range_out_of_bounds"):
        render(code((7, 9, "a")), SMALL)


def test_too_long_outputs_still_render_for_inspection() -> None:
    rendered, reason = render_checked(code((2, 2, "b")), SMALL)
    assert reason == "too_long"
    assert rendered == render(code((2, 2, "b")), SMALL)


def test_the_marker_counts_toward_the_length_limit() -> None:
    out = CompressorOutput("plain", text="s")
    limit = len(PLAIN_MARKER) + 2
    assert validate(out, "r" * limit) is None  # equal length is allowed
    assert validate(out, "r" * (limit - 1)) == "too_long"


def test_line_count_matches_the_numbered_prompt(log: str) -> None:
    for text in ["", "one", "one\n", "a\nb\n\n", log]:
        assert line_count(text) == len(number_lines(text).split("\n"))
    # a trailing newline is an (empty) last line that ranges may cover
    assert (
        render(code((2, 3, "end")), "keep\ndrop\n")
        == f"{CODE_MARKER}\nkeep\n(compressed 2 lines: end)"
    )


def test_rendering_real_outputs_keeps_unomitted_lines_verbatim(real: list[str]) -> None:
    assert len(real) >= 5
    for raw in real:
        lines = raw.split("\n")
        if len(lines) < 6:
            continue
        out = code((2, len(lines) - 2, "middle"))
        rendered = render(out, raw).split("\n")
        assert rendered == [
            CODE_MARKER,
            lines[0],
            f"(compressed {len(lines) - 3} lines: middle)",
            *lines[-2:],
        ]
        assert validate(out, raw) is None
