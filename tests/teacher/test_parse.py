"""Parsing teacher replies: tolerant of wrapping, strict about the object itself."""

from __future__ import annotations

import pytest

from builder.teacher.output import CompressorOutput, OmittedRange, ParseError
from builder.teacher.parse import parse_output, parse_range

CODE = CompressorOutput(
    "code",
    ranges=(OmittedRange(1, 5, "session header"), OmittedRange(7, 12, "test progress lines")),
)


def test_unchanged_parses_and_ignores_content() -> None:
    assert parse_output('{"type": "unchanged"}') == CompressorOutput("unchanged")
    assert parse_output('{"type": "unchanged", "content": "x"}') == CompressorOutput("unchanged")


def test_plain_content_is_kept_without_outer_whitespace() -> None:
    reply = '{"type": "plain", "content": "  1 failed, 5 passed: test_empty_items\\n"}'
    assert parse_output(reply) == CompressorOutput(
        "plain", text="1 failed, 5 passed: test_empty_items"
    )


def test_code_ranges_accept_single_lines_dashes_and_missing_summaries() -> None:
    reply = '{"type": "code", "content": ["1-5: header", "7: one line", "9 – 12: dash", "14-20"]}'
    assert parse_output(reply) == CompressorOutput(
        "code",
        ranges=(
            OmittedRange(1, 5, "header"),
            OmittedRange(7, 7, "one line"),
            OmittedRange(9, 12, "dash"),
            OmittedRange(14, 20, ""),
        ),
    )


def test_range_summary_may_contain_colons_and_digits() -> None:
    assert parse_range("3-4: at tests/a.py:41: ok") == OmittedRange(3, 4, "at tests/a.py:41: ok")
    assert parse_range("lines 3-4: x") is None


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"type": "code", "content": ["1-5: session header", '
        '"7-12: test progress lines"]}\n```',
        'Here is the compression:\n{"type": "code", "content": ["1-5: session header", '
        '"7-12: test progress lines"]}\nThis keeps the failure. {not json}',
        '<think>maybe {"type": "unchanged"}?</think>\n{"type": "code", "content": '
        '["1-5: session header", "7-12: test progress lines"]}',
        '{"type": "code", "content": ["1-5: session header", "7-12: test progress lines"]} }}',
    ],
    ids=["fenced", "prose-around", "think-block", "trailing-garbage"],
)
def test_wrapped_replies_parse_to_the_same_output(reply: str) -> None:
    assert parse_output(reply) == CODE


def test_raw_newlines_inside_strings_are_tolerated() -> None:
    assert parse_output('{"type": "plain", "content": "a\nb"}') == CompressorOutput("plain", "a\nb")


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "empty_reply"),
        ("   \n", "empty_reply"),
        (None, "empty_reply"),
        ("I would keep everything.", "no_json"),
        ('{"type": "plain", "content": "unterminated', "invalid_json"),
        ('{"type": "unchanged"} and also {"type": "plain", "content": "x"}', "multiple_json"),
        ('{"content": "no type"}', "bad_type"),
        ('{"type": "summary", "content": "x"}', "bad_type"),
        ('{"type": "plain", "content": ["a", "b"]}', "bad_content"),
        ('{"type": "plain"}', "bad_content"),
        ('{"type": "code", "content": "1-5: x"}', "bad_content"),
        ('{"type": "code", "content": ["1-5: x", 7]}', "bad_content"),
        ('{"type": "code", "content": ["first five lines: x"]}', "bad_range_syntax"),
    ],
)
def test_bad_replies_give_a_reason(reply: str | None, reason: str) -> None:
    result = parse_output(reply)
    assert isinstance(result, ParseError)
    assert result.reason == reason


@pytest.mark.parametrize(
    "output",
    [CompressorOutput("unchanged"), CompressorOutput("plain", text='say "hi"\nok'), CODE],
)
def test_canonical_json_parses_back_to_the_same_output(output: CompressorOutput) -> None:
    assert parse_output(output.to_json()) == output


def test_canonical_json_text_is_stable() -> None:
    assert CompressorOutput("unchanged").to_json() == '{"type": "unchanged"}'
    assert CODE.to_json() == (
        '{"type": "code", "content": ["1-5: session header", "7-12: test progress lines"]}'
    )
    single = CompressorOutput("code", ranges=(OmittedRange(4, 4, "é"),))
    assert single.to_json() == '{"type": "code", "content": ["4: é"]}'
