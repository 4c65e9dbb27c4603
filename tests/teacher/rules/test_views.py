"""File views keep signatures and fold function bodies outside the region asked for."""

from __future__ import annotations

import re

from builder.teacher.render import render
from builder.teacher.rules import fold_function_bodies
from tests.teacher.rules.real import DJANGO, SWE_SMITH, TEXTSTATS, step_where

SIGNATURE = re.compile(r"^\s*\d+\t\s*(@|def |async def |class |import |from )")


def test_a_whole_file_read_keeps_signatures_imports_and_classes() -> None:
    step = step_where(TEXTSTATS, "nl -ba textstats/stats.py")
    raw = step.observation
    out = fold_function_bodies(raw, step.action)
    assert out is not None
    text = render(out, raw).split("\n")
    signatures = [line for line in raw.split("\n") if SIGNATURE.match(line)]
    assert len(signatures) >= 10
    assert all(line in text for line in signatures)
    assert not any("sentences=count_sentences(text)," in line for line in text)  # a body line
    assert "(compressed 7 lines: body of summarize)" in text
    assert "(compressed 9 lines: body of format_summary)" in text
    # two-line bodies cost about what their placeholder would: they stay
    assert "    22\t    return [w.lower() for w in WORD.findall(text)]" in text


def test_an_editor_view_of_a_whole_file_folds_method_bodies() -> None:
    step = step_where(
        SWE_SMITH, '{"command":"view","path":"/testbed/moto/cognitoidentity/responses.py"}'
    )
    raw = step.observation
    out = fold_function_bodies(raw, step.action)
    assert out is not None
    text = render(out, raw)
    defs = [line for line in raw.split("\n") if re.match(r"^\s*\d+\t\s*def ", line)]
    assert len(defs) >= 5 and all(d in text for d in defs)
    assert len(text) < len(raw) / 2


def test_not_applicable_to_the_region_asked_for_or_to_edits() -> None:
    ranged = step_where(DJANGO, "nl -ba django/contrib/sitemaps/__init__.py | sed -n '150,180p'")
    assert fold_function_bodies(ranged.observation, ranged.action) is None
    edit = step_where(SWE_SMITH, "<parameter=command>str_replace</parameter>", "has been edited")
    assert fold_function_bodies(edit.observation, edit.action) is None
