"""The shape rules, and what every rule of the registry promises on real observations."""

from __future__ import annotations

import pytest

from builder.errors import ConfigError
from builder.teacher.output import CompressorOutput, OmittedRange
from builder.teacher.render import CODE_MARKER, render, validate
from builder.teacher.rules import (
    POOL,
    RULE_NAMES,
    RULES,
    apply_rule,
    dedupe_repeated_lines,
    get_rule,
    head_tail,
    mask_long_lines,
    unchanged,
)
from tests.teacher.rules.real import ALL_FILES, steps_of

NUMBERED = "\n".join(f"line {i}: compiling module number {i} of the build" for i in range(1, 41))


def test_head_tail_omits_the_middle() -> None:
    out = head_tail(NUMBERED, head=10, tail=20)
    assert out == CompressorOutput("code", ranges=(OmittedRange(11, 20, "middle of the output"),))
    assert validate(out, NUMBERED) is None
    lines = NUMBERED.split("\n")
    assert render(out, NUMBERED).split("\n") == [
        CODE_MARKER,
        *lines[:10],
        "(compressed 10 lines: middle of the output)",
        *lines[20:],
    ]


def test_head_tail_does_not_apply_to_short_outputs() -> None:
    assert head_tail(NUMBERED, head=20, tail=20) is None
    assert head_tail(NUMBERED, head=20, tail=19) is None  # one line is not worth a placeholder
    # two short lines save less than the marker line and the placeholder cost: never longer
    assert head_tail(NUMBERED, head=20, tail=18) is None
    assert head_tail(NUMBERED, head=20, tail=17) is not None


def test_dedupe_collapses_runs_of_lines_equal_up_to_numbers() -> None:
    raw = "\n".join(
        ["Collecting packages"]
        + [
            f"Downloading chunk {i} of 9 at {100 + i} kB/s from the mirror server"
            for i in range(1, 10)
        ]
        + ["WARNING: cache disabled for this run of the installer"] * 4
        + ["done", "done", "done"]
    )
    out = dedupe_repeated_lines(raw)
    assert out == CompressorOutput(
        "code",
        ranges=(
            OmittedRange(3, 10, "like the line above, other numbers"),
            OmittedRange(12, 14, "same as the line above"),
        ),
    )
    assert validate(out, raw) is None
    assert render(out, raw) == "\n".join(
        [
            CODE_MARKER,
            "Collecting packages",
            "Downloading chunk 1 of 9 at 101 kB/s from the mirror server",
            "(compressed 8 lines: like the line above, other numbers)",
            "WARNING: cache disabled for this run of the installer",
            "(compressed 3 lines: same as the line above)",
            "done",
            "done",
            "done",
        ]
    )


def test_dedupe_does_not_apply_without_worthwhile_runs(log: str) -> None:
    assert dedupe_repeated_lines("a\na\na\nb") is None  # a placeholder is longer than "a\na"
    assert dedupe_repeated_lines(log) is None


def test_mask_long_lines_merges_consecutive_long_lines() -> None:
    blob = "QUJD" * 150
    raw = "\n".join(["$ cat bundle.min.js", blob, blob + "x", "short", blob])
    out = mask_long_lines(raw, max_chars=400)
    assert out == CompressorOutput(
        "code",
        ranges=(
            OmittedRange(2, 3, f"1201 characters starting: {blob[:60]}"),
            OmittedRange(5, 5, f"600 characters starting: {blob[:60]}"),
        ),
    )
    assert validate(out, raw) is None
    assert mask_long_lines(raw, max_chars=601) is None


def test_unchanged_rule_is_the_raw_output(log: str) -> None:
    assert render(unchanged(log), log) == log


def test_the_registry_names_every_rule_and_rejects_unknown_names() -> None:
    assert tuple(RULES) == RULE_NAMES and set(POOL) == set(RULES) - {"unchanged"}
    assert get_rule("head_tail") is head_tail
    with pytest.raises(ConfigError, match="unknown rule 'summarise_all'; known rules: "):
        get_rule("summarise_all")


def test_on_every_real_observation_each_rule_is_valid_and_shorter_or_not_applicable() -> None:
    applied = {name: 0 for name in RULES}
    observations = 0
    for path in ALL_FILES:
        for step in steps_of(path):
            if not step.observation:
                continue
            observations += 1
            for name in RULES:
                out = apply_rule(name, step.observation, step.action)
                if out is None:
                    continue
                applied[name] += 1
                assert validate(out, step.observation) is None, (name, path.name, step.step_index)
                if out.kind != "unchanged":
                    assert len(render(out, step.observation)) < len(step.observation), name
    assert observations > 100
    # every command-aware rule finds real outputs it applies to, and none applies everywhere
    # (no sample has a line over 400 characters, so mask_long_lines never applies here)
    assert all(0 < applied[name] < observations for name in POOL if name != "mask_long_lines"), (
        applied
    )
