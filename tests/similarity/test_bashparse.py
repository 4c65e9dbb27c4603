"""The tree-sitter-bash wrapper: well-formedness, simple commands, cd prefixes, heredocs."""

from __future__ import annotations

import pytest

from builder.similarity.bashparse import Redirect, parse_script, parse_tree, parses, unquote


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cd /testbed && grep -rn 'foo bar' src/ | head -20",
        "cat <<'EOF' > r.py\nimport x\nEOF\npython r.py",
        "for f in *.py; do echo $f; done",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
    ],
)
def test_well_formed_commands_parse(command: str) -> None:
    assert parses(command)


@pytest.mark.parametrize("command", ["", "   ", "if (; fi", "echo 'unterminated", "ls |"])
def test_empty_or_broken_commands_do_not_parse(command: str) -> None:
    assert not parses(command)


def test_parse_trees_are_cached_per_command_string() -> None:
    assert parse_tree("grep -rn x .") is parse_tree("grep -rn x .")


def test_pipeline_and_list_are_split_into_simple_commands_with_unquoted_args() -> None:
    script = parse_script("cd /testbed && grep -rn 'foo bar' src/ | head -20")
    assert [[c.name for c in p.commands] for p in script.pipelines] == [["cd"], ["grep", "head"]]
    grep = script.pipelines[1].commands[0]
    assert grep.args == ("-rn", "foo bar", "src/")
    assert grep.cwd == "/testbed"


def test_cd_prefixes_accumulate_and_do_not_leak_out_of_subshells() -> None:
    script = parse_script("cd a; cd b && ls; (cd c && make) && pwd")
    cwd = {c.name: c.cwd for c in script.commands}
    assert cwd["ls"] == "a/b"
    assert cwd["make"] == "a/b/c"
    assert cwd["pwd"] == "a/b"


def test_heredoc_body_and_redirect_target_belong_to_the_command() -> None:
    script = parse_script(
        "cat <<'EOF' > reproduce.py\nimport x\nprint(1)\nEOF\npython reproduce.py"
    )
    cat, python = script.commands
    assert cat.heredoc == "import x\nprint(1)\n"
    assert cat.redirects == (Redirect(op=">", target="reproduce.py"),)
    assert python.args == ("reproduce.py",)


def test_heredoc_after_a_cd_list_attaches_to_the_last_command() -> None:
    script = parse_script("cd /testbed && cat <<'EOF' > t.py\nimport a\nEOF\npython t.py")
    names = [c.name for c in script.commands]
    assert names == ["cd", "cat", "python"]
    cat = script.commands[1]
    assert cat.heredoc == "import a\n"
    assert cat.redirects[0].target == "t.py"
    assert cat.cwd == "/testbed"


def test_here_string_is_stdin_content() -> None:
    (cmd,) = parse_script('grep x <<< "a b"').commands
    assert cmd.heredoc == "a b"


def test_env_assignments_are_not_arguments() -> None:
    (cmd,) = parse_script("FOO=1 python x.py > out.txt 2>&1").commands
    assert cmd.name == "python"
    assert cmd.args == ("x.py",)
    assert Redirect(op=">", target="out.txt") in cmd.redirects


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("'a b'", "a b"),
        ('"a"', "a"),
        ("a", "a"),
        ("a\\ b", "a b"),
        ("'x'\"y\"", "xy"),
        ("$HOME", "$HOME"),
    ],
)
def test_unquote_follows_shell_word_rules(word: str, expected: str) -> None:
    assert unquote(word) == expected


def test_the_right_side_of_or_is_marked_as_run_on_failure() -> None:
    script = parse_script("a && b || c; d | e || (f; g) && h")
    marks = [(p.commands[0].name, p.on_failure) for p in script.pipelines]
    assert marks == [
        ("a", False), ("b", False), ("c", True), ("d", False), ("f", True), ("g", True),
        ("h", False),
    ]  # fmt: skip
