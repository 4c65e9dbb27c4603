"""Rule names: the one table that config validation, candidate building and evaluation read.

A rule is addressed by its name everywhere: `teacher.rules` in a pipeline config, the
`rule:<name>` source of its candidate rows, and the evaluation baselines. `POOL` is the
command-aware set plus the shape rules, i.e. every rule except `unchanged` (which the
judge-reliability control already covers).
"""

from __future__ import annotations

from builder.errors import ConfigError
from builder.teacher.output import CompressorOutput
from builder.teacher.rules.base import Rule
from builder.teacher.rules.generic import (
    dedupe_repeated_lines,
    head_tail,
    mask_long_lines,
    unchanged,
)
from builder.teacher.rules.listings import fold_deep_entries
from builder.teacher.rules.search import cap_matches_per_file
from builder.teacher.rules.testruns import fold_passing_tests
from builder.teacher.rules.tracebacks import fold_library_frames
from builder.teacher.rules.views import fold_function_bodies
from schemas.steps import Action

RULES: dict[str, Rule] = {
    "head_tail": head_tail,
    "dedupe_repeated_lines": dedupe_repeated_lines,
    "mask_long_lines": mask_long_lines,
    "unchanged": unchanged,
    "test_failures": fold_passing_tests,
    "repo_frames": fold_library_frames,
    "search_by_file": cap_matches_per_file,
    "deep_listing": fold_deep_entries,
    "code_outline": fold_function_bodies,
}
RULE_NAMES: tuple[str, ...] = tuple(RULES)
POOL: tuple[str, ...] = tuple(name for name in RULES if name != "unchanged")


def get_rule(name: str) -> Rule:
    """The rule called `name`; an unknown name is a config error listing the known ones."""
    try:
        return RULES[name]
    except KeyError:
        raise ConfigError(f"unknown rule {name!r}; known rules: {sorted(RULES)}") from None


def apply_rule(name: str, raw: str, action: Action | None = None) -> CompressorOutput | None:
    """The output of rule `name` on `raw` (produced by `action`), None when it does not apply."""
    return get_rule(name)(raw, action)
