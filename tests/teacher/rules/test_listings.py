"""Directory listings fold deep subtrees into one line each."""

from __future__ import annotations

import re

from builder.teacher.render import render
from builder.teacher.rules import fold_deep_entries
from builder.teacher.rules.listings import is_listing_command
from tests.teacher.conftest import make_step
from tests.teacher.rules.real import SWE_SMITH, TEXTSTATS, step_where


def test_git_internals_of_a_long_listing_fold_into_one_line() -> None:
    step = step_where(TEXTSTATS, "ls -la $(find")
    raw = step.observation
    assert is_listing_command(step.action)
    out = fold_deep_entries(raw, step.action)
    assert out is not None
    packs = [line for line in raw.split("\n") if "/.git/objects/pack/" in line]
    assert len(packs) == 6
    text = render(out, raw).split("\n")
    assert "(compressed 6 lines: 6 entries under .git/objects/pack/)" in text
    shallow = [line for line in raw.split("\n") if line.strip() and "/.git/" not in line]
    assert all(line in text for line in shallow)


def test_a_huge_find_is_folded_to_its_top_levels() -> None:
    step = step_where(
        SWE_SMITH, 'find /testbed -type f -name "*.py" | grep -v "__pycache__" | sort'
    )
    raw = step.observation
    paths = [line for line in raw.split("\n") if line.strip().startswith("/testbed/")]
    assert len(paths) > 1000
    out = fold_deep_entries(raw, step.action)
    assert out is not None
    text = render(out, raw)
    assert len(text) < len(raw) / 4
    folded = sum(int(m.group(1)) for m in re.finditer(r"\(compressed (\d+) lines", text))
    kept = len(text.split("\n")) - 1 - len(out.ranges)  # minus the marker line
    assert folded + kept == len(raw.split("\n"))
    assert "entries under moto/" in text


def test_tree_output_folds_below_the_chosen_depth() -> None:
    tree = "\n".join(
        [".", "├── src", "│   └── pkg", "│       ├── __init__.py", "│       └── core"]
        + [f"│           ├── module_{i}.py" for i in range(70)]
        + ["└── README.md", "", "4 directories, 73 files"]
    )
    step = make_step(tree)
    out = fold_deep_entries(tree, step.action)
    assert out is not None
    text = render(out, tree)
    assert "(compressed 70 lines: 70 entries under src/pkg/core/)" in text
    assert "└── README.md" in text and "4 directories, 73 files" in text


def test_not_applicable_to_shallow_listings_or_other_output() -> None:
    step = step_where(SWE_SMITH, 'find /testbed -type f -name "*.py" | grep -i cognito')
    assert fold_deep_entries(step.observation, step.action) is None
    pytest_run = step_where(TEXTSTATS, "pytest")
    assert fold_deep_entries(pytest_run.observation, pytest_run.action) is None


def test_ls_recursive_sections_below_the_depth_fold_whole() -> None:
    sections = ["pkg:", "__init__.py", "core", ""]
    for name in ("core", "core/io", "core/io/formats"):
        sections += [f"pkg/{name}:", *[f"module_{i}.py" for i in range(30)], ""]
    raw = "\n".join(sections).rstrip("\n")
    default = fold_deep_entries(raw, None)
    assert default is not None
    deep = render(default, raw).split("\n")
    # 99 lines fit the default 100: only the files three levels down fold, under their header
    assert deep[-2:] == [
        "pkg/core/io/formats:",
        "(compressed 30 lines: 30 entries under core/io/formats/)",
    ]
    short = fold_deep_entries(raw, None, max_lines=40)
    assert short is not None
    text = render(short, raw).split("\n")
    # depth 2: the files of core/io and the whole core/io/formats section become one line
    assert "pkg/core/io:" in text and "pkg/core/io/formats:" not in text
    assert "(compressed 62 lines: 62 entries under core/io/)" in text
