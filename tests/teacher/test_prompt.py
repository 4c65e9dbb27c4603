"""The teacher prompt and request: exact text, versioning, structured-output schema."""

from __future__ import annotations

import json
import re

import pytest

from builder.teacher.output import KINDS, CompressorOutput
from builder.teacher.parse import parse_output, parse_range
from builder.teacher.prompt import (
    COMPRESSOR_SCHEMA,
    NO_FOCUS,
    PROMPT_VERSION,
    RANGE_PATTERN,
    SYSTEM_PROMPT,
    build_prompt,
    teacher_request,
)


def test_user_prompt_has_task_focus_command_and_numbered_output() -> None:
    system, user = build_prompt(
        " Fix the crash in get_latest_lastmod.\n",
        "Which test fails and why?",
        "pytest tests/test_sitemaps.py",
        "1 failed\nE   ValueError: max() arg is an empty sequence\n",
    )
    assert system == SYSTEM_PROMPT
    assert user == (
        "<task>\nFix the crash in get_latest_lastmod.\n</task>\n\n"
        "<focus_question>Which test fails and why?</focus_question>\n\n"
        "<command>\npytest tests/test_sitemaps.py\n</command>\n\n"
        '<output lines="3">\n'
        "1> 1 failed\n"
        "2> E   ValueError: max() arg is an empty sequence\n"
        "3> \n"
        "</output>\n\n"
        "Answer with one JSON object."
    )


@pytest.mark.parametrize("focus", [None, "", "   "])
def test_missing_focus_question_says_so(focus: str | None) -> None:
    _, user = build_prompt("task", focus, "ls", "a")
    assert f"<focus_question>{NO_FOCUS}</focus_question>" in user


def test_prompt_of_a_real_log_numbers_every_line(log: str) -> None:
    _, user = build_prompt("task", "", "pytest", log)
    body = user.split('<output lines="31">\n', 1)[1].split("\n</output>", 1)[0]
    assert body.split("\n") == [f"{i}> {line}" for i, line in enumerate(log.split("\n"), 1)]


def test_system_prompt_examples_parse_as_each_kind() -> None:
    examples = re.findall(r"^\d\. (\{.*\})$", SYSTEM_PROMPT, re.MULTILINE)
    parsed = [parse_output(e) for e in examples]
    assert [p.kind for p in parsed if isinstance(p, CompressorOutput)] == list(KINDS)


def test_teacher_request_defaults_to_eight_structured_samples_at_temperature_one() -> None:
    request = teacher_request("SYS", "USER")
    assert [(m.role, m.content) for m in request.messages] == [("system", "SYS"), ("user", "USER")]
    assert (request.n, request.temperature, request.max_tokens) == (8, 1.0, 1024)
    assert request.json_schema == COMPRESSOR_SCHEMA
    unstructured = teacher_request("SYS", "USER", n=2, temperature=0.5, seed=7, structured=False)
    assert (unstructured.n, unstructured.temperature, unstructured.seed) == (2, 0.5, 7)
    assert unstructured.json_schema is None


def test_schema_allows_exactly_the_three_kinds_and_their_content() -> None:
    assert COMPRESSOR_SCHEMA["properties"]["type"]["enum"] == list(KINDS)
    content = COMPRESSOR_SCHEMA["properties"]["content"]["anyOf"]
    assert {c["type"] for c in content} == {"string", "array", "null"}  # null: strict mode
    assert COMPRESSOR_SCHEMA["required"] == ["type", "content"]  # strict: all listed


def test_schema_compiles_to_a_llama_cpp_grammar() -> None:
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    gbnf = llama_grammar.json_schema_to_gbnf(json.dumps(COMPRESSOR_SCHEMA))
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines() if " ::= " in line)
    # the root is the exact union: each kind with its own content, ranges by their pattern
    assert rules["root"] == "alternative-0 | alternative-1 | alternative-2"
    assert rules["alternative-0"] == '"{" space alternative-0-type-kv "}" space'
    assert rules["alternative-1-type"] == '"\\"plain\\""'
    assert rules["alternative-1-content"] == '"\\"" char+ "\\"" space'
    assert rules["alternative-2-content-item"].startswith('"\\"" [1-9] [0-9]* ("-" [1-9] [0-9]*)?')


def test_prompt_version_is_a_stable_label() -> None:
    assert PROMPT_VERSION == "coact-v2"


def test_range_pattern_accepts_what_the_parser_reads_and_the_prompt_shows() -> None:
    examples = re.findall(r'"(\d+(?:-\d+)?: [^"]+)"', SYSTEM_PROMPT)
    assert examples and all(re.match(RANGE_PATTERN, e) for e in examples)
    for spec in ("3-41: imports and helpers", "57: a blank line", "120-1499: test data"):
        assert re.match(RANGE_PATTERN, spec) and parse_range(spec) is not None
    # what a grammar must not let through: no summary, a zero, a quote that breaks the JSON
    for spec in ("3-41", "0: x", "3-: x", 'a "quoted" summary', "1: two\nlines"):
        assert not re.match(RANGE_PATTERN, spec)
