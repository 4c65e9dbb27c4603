"""Rule-based candidates: cheap compressions that need no model.

Each rule maps a raw output and the action that produced it to a `CompressorOutput`, or None
when it does not apply, so rule candidates go through the same validate / render / judge path
as teacher samples and can win selection on their own merit. One module per family:
`generic` (shape only), `testruns`, `tracebacks`, `search`, `listings`, `views`; `registry`
names them.

Reads: a raw observation and its action. Writes: nothing (compressor outputs).
Entry point: `builder.teacher.rules.registry.apply_rule`.
"""

from builder.teacher.rules.base import Rule, Span, fold
from builder.teacher.rules.generic import (
    dedupe_repeated_lines,
    head_tail,
    mask_long_lines,
    unchanged,
)
from builder.teacher.rules.listings import fold_deep_entries
from builder.teacher.rules.registry import POOL, RULE_NAMES, RULES, apply_rule, get_rule
from builder.teacher.rules.search import cap_matches_per_file
from builder.teacher.rules.testruns import fold_passing_tests
from builder.teacher.rules.tracebacks import fold_library_frames
from builder.teacher.rules.views import fold_function_bodies

__all__ = [
    "POOL",
    "RULES",
    "RULE_NAMES",
    "Rule",
    "Span",
    "apply_rule",
    "cap_matches_per_file",
    "dedupe_repeated_lines",
    "fold",
    "fold_deep_entries",
    "fold_function_bodies",
    "fold_library_frames",
    "fold_passing_tests",
    "get_rule",
    "head_tail",
    "mask_long_lines",
    "unchanged",
]
