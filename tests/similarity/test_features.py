"""Feature extraction: intents, files, patterns, line ranges, content, git, flags."""

from __future__ import annotations

import pytest

from builder.ingest.formats.base import tool_call_action
from builder.similarity import intent as it
from builder.similarity.features import (
    WHOLE,
    Features,
    LineRange,
    action_features,
    shell_features,
    tool_features,
)


def one(command: str) -> Features:
    units = shell_features(command)
    assert len(units) == 1, units
    return units[0]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -n '150,180p' a.py", (LineRange(150, 180),)),
        ("sed -n 100p a.py", (LineRange(100, 100),)),
        ("sed -n '10,20p;30,40p' a.py", (LineRange(10, 20), LineRange(30, 40))),
        ("sed -n '5,+3p' a.py", (LineRange(5, 8),)),
        ("head -n 50 a.py", (LineRange(1, 50),)),
        ("head -50 a.py", (LineRange(1, 50),)),
        ("tail -n 20 a.py", (LineRange(-20, None),)),
        ("tail -n +30 a.py", (LineRange(30, None),)),
        ("cat a.py", (WHOLE,)),
        ("nl -ba a.py | sed -n '150,180p'", (LineRange(150, 180),)),
        ("cat -n a.py | head -60", (LineRange(1, 60),)),
        ("head -n 50 a.py | tail -n 10", (LineRange(41, 50),)),
        ("sed -n '100,200p' a.py | head -20", (LineRange(100, 119),)),
        ("awk 'NR>=10 && NR<=20' a.py", (LineRange(10, 20),)),
        ("awk 'NR>9 && NR<21 {print NR\": \"$0}' a.py", (LineRange(10, 20),)),
        ("open a.py 293", (LineRange(278, 377),)),
        ("open a.py", (LineRange(1, 100),)),
        ("open a.py 1", (LineRange(1, 100),)),
        ("open a.py 16", (LineRange(1, 100),)),
        ("open a.py 17", (LineRange(2, 101),)),
    ],
)
def test_line_ranges_read(command: str, expected: tuple[LineRange, ...]) -> None:
    unit = one(command)
    assert unit.intent == it.READ
    assert unit.files == {"a.py"} or command.startswith("open")
    assert unit.ranges == expected


def test_files_resolve_against_cd_and_strip_roots() -> None:
    unit = one("cd /testbed/django && grep -rn lastmod contrib/")
    assert unit.files == {"django/contrib"}
    assert one("cat /testbed/./a.py").files == {"a.py"}


def test_search_patterns_and_default_directory() -> None:
    unit = one('grep -rn "def foo" src/')
    assert (unit.intent, unit.patterns, unit.files, unit.flags) == (
        it.SEARCH,
        {"def foo"},
        {"src"},
        {"-r", "-n"},
    )
    assert one("rg get_latest").files == {"."}
    assert one("grep -rin Foo .").patterns == {"foo"}
    assert one("grep -e a -e b f.py").patterns == {"a", "b"}


def test_grep_after_a_read_is_a_search_in_that_file() -> None:
    unit = one("cat a.py | grep -n import")
    assert (unit.intent, unit.files, unit.patterns) == (it.SEARCH, {"a.py"}, {"import"})


def test_find_by_name_is_a_search_and_plain_find_is_a_listing() -> None:
    assert one('find /testbed -name "x.py"').patterns == {"x.py"}
    assert one('find /testbed -name "x.py"').files == {"."}
    assert one("find src").intent == it.LIST
    unit = one('find . -name "*.py" | xargs grep -l Sitemap')
    assert (unit.intent, unit.op, unit.patterns) == (it.SEARCH, "content", {"Sitemap"})
    assert "-name=*.py" in unit.flags


def test_heredoc_written_to_a_file_is_a_modification_with_content() -> None:
    unit = one("cat <<'EOF' > reproduce.py\nprint(1)\nEOF")
    assert (unit.intent, unit.op, unit.files, unit.content) == (
        it.MODIFY,
        "write",
        {"reproduce.py"},
        "print(1)\n",
    )


def test_echo_redirects_write_or_append() -> None:
    assert one('echo "x" > a.txt').op == "write"
    assert one('echo "x" >> a.txt').op == "append"
    assert one('echo "x" >> a.txt').content == "x"
    assert one('echo "hello"').intent == it.OUTPUT


def test_inline_python_is_run_content() -> None:
    assert one('python -c "import a; print(a.f(2))"').content == "import a; print(a.f(2))"
    assert one("python3 - <<'EOF'\nimport a\nEOF").content == "import a\n"


def test_python_modules_and_scripts() -> None:
    unit = one("python -m pytest tests/test_x.py::TestA::test_b -xvs")
    assert (unit.verb, unit.files, unit.patterns) == (
        "pytest",
        {"tests/test_x.py"},
        {"TestA::test_b"},
    )
    assert one("pytest tests/a.py -k test_x").patterns == {"test_x"}
    script = one("cd /testbed && python3 tests/runtests.py sitemaps_tests")
    assert (script.intent, script.files, script.patterns) == (
        it.RUN,
        {"tests/runtests.py"},
        {"sitemaps_tests"},
    )
    assert one("python -m pip install -e .").files == {"."}


def test_sed_in_place_is_an_edit_whose_script_is_the_anchor() -> None:
    unit = one("sed -i 's/a/b/' /testbed/x.py")
    assert (unit.intent, unit.op, unit.files, unit.old_text) == (
        it.MODIFY,
        "edit",
        {"x.py"},
        "s/a/b/",
    )


def test_git_subcommands_skip_global_options_and_refs() -> None:
    assert one("git -C /testbed --no-pager diff HEAD").git == "diff"
    assert one("git diff HEAD").files == {"."}  # the whole worktree; HEAD is a revision
    assert one("git diff HEAD").revisions == {"HEAD"}
    assert one("git diff HEAD~1..HEAD").revisions == {"HEAD~1", "HEAD"}
    assert one("git diff --staged src/a.py").revisions == {"--cached"}
    assert one("git log -5").flags == {"-n=5"}
    assert one("git stash pop").git == "stash pop"
    assert one("git grep foo").intent == it.SEARCH


def test_wrappers_are_unwrapped() -> None:
    assert one("timeout 60 python reproduce.py").files == {"reproduce.py"}
    assert one("sudo env A=1 ls src").files == {"src"}


def test_setup_units_are_dropped_when_the_line_does_more() -> None:
    units = shell_features('cd /testbed && export X=1 && python a.py && echo "---" && python b.py')
    assert [u.files for u in units] == [{"a.py"}, {"b.py"}]
    assert one("echo hi").intent == it.OUTPUT


@pytest.mark.parametrize(
    "command",
    [
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
        "echo MINI_SWE_AGENT_FINAL_OUTPUT",
        "submit",
    ],
)
def test_submission_commands(command: str) -> None:
    assert one(command).intent == it.SUBMIT


def test_swe_agent_edit_block_is_one_edit_with_its_lines() -> None:
    unit = one("edit 287:295\n    x = 1\nend_of_edit")
    assert (unit.intent, unit.ranges, unit.content) == (
        it.MODIFY,
        (LineRange(287, 295),),
        "    x = 1",
    )


def test_editor_calls_map_to_the_shared_vocabulary() -> None:
    view = action_features(
        tool_call_action(
            "str_replace_editor",
            {"command": "view", "path": "/testbed/a.py", "view_range": [5, -1]},
        )
    )[0]
    assert (view.intent, view.files, view.ranges, view.editor) == (
        it.READ,
        {"a.py"},
        (LineRange(5, None),),
        True,
    )
    edit = tool_features(
        "Edit", '{"file_path": "/repo/a.py", "old_string": "x", "new_string": "y"}'
    )[0]
    assert (edit.verb, edit.old_text, edit.content) == ("str_replace", "x", "y")
    read = tool_features("Read", '{"file_path": "/repo/a.py", "offset": 10, "limit": 5}')[0]
    assert read.ranges == (LineRange(10, 14),)
    assert tool_features("finish", "{}")[0].intent == it.SUBMIT


def test_editor_command_text_parses_like_the_tool_call() -> None:
    unit = one("str_replace_editor view /testbed/a.py --view_range 10 20")
    assert (unit.verb, unit.files, unit.ranges) == ("view", {"a.py"}, (LineRange(10, 20),))


def test_unknown_tools_only_match_themselves() -> None:
    unit = tool_features("think", '{"thought": "hmm"}')[0]
    assert unit.intent == "tool:think"


def test_a_view_range_given_as_text_is_read_like_a_list() -> None:
    # XML-style tool calls (SWE-smith / SWE-Gym messages) carry parameters as strings
    text = tool_features(
        "str_replace_editor", '{"command": "view", "path": "a.py", "view_range": "[1, 100]"}'
    )
    assert text[0].ranges == (LineRange(1, 100),)
    junk = tool_features(
        "str_replace_editor", '{"command": "view", "path": "a.py", "view_range": "x"}'
    )
    assert junk[0].ranges == (WHOLE,)
