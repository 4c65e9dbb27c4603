"""Lexical normalisation: root prefixes, flag bundles, cd prefixes, JSON arguments."""

from __future__ import annotations

import pytest

from builder.ingest.formats.base import shell_action, tool_call_action
from builder.similarity.normalize import (
    action_key,
    canonical_arguments,
    program,
    resolve,
    shell_key,
    split_flags,
    strip_root,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/testbed/django/db.py", "django/db.py"),
        ("/repo/a.py", "a.py"),
        ("/workspace/django__django__3.0/a.py", "a.py"),
        ("/pydicom__pydicom/src/x.py", "src/x.py"),
        ("./a.py", "a.py"),
        ("/testbed", "."),
        ("/tmp/x.py", "/tmp/x.py"),
        ("/usr/lib/python3/x.py", "/usr/lib/python3/x.py"),
    ],
)
def test_repository_roots_and_dot_slash_are_stripped(path: str, expected: str) -> None:
    assert strip_root(path) == expected


def test_relative_paths_resolve_against_the_cd_target() -> None:
    assert resolve("contrib/", "/testbed/django") == "django/contrib"
    assert resolve("../tests/x.py", "/testbed/src") == "tests/x.py"
    assert resolve("/tmp/a", "/testbed/src") == "/tmp/a"
    assert resolve("*.py", "src") == "src/*.py"


def test_flag_bundles_split_and_order_does_not_matter() -> None:
    assert split_flags("grep", ("-rn", "foo", ".")) == split_flags("grep", ("-n", "-r", "foo", "."))
    assert split_flags("grep", ("-rn", "foo", "."))[0] == {"-r", "-n"}


def test_value_flags_keep_their_value_in_any_spelling() -> None:
    assert split_flags("nl", ("-ba", "f.py")) == (frozenset({"-b=a"}), ("f.py",))
    assert split_flags("head", ("-20", "f"))[0] == split_flags("head", ("-n", "20", "f"))[0]
    assert split_flags("head", ("-n20", "f"))[0] == {"-n=20"}
    assert split_flags("pytest", ("--tb", "short"))[0] == split_flags("pytest", ("--tb=short",))[0]


def test_double_dash_ends_flags() -> None:
    assert split_flags("git", ("diff", "--", "-weird-name")) == (
        frozenset(),
        ("diff", "-weird-name"),
    )


def test_program_names_are_canonical() -> None:
    assert program("/usr/bin/python3.11") == "python"
    assert program("egrep") == "grep"
    assert program("pip3") == "pip"


def test_shell_keys_ignore_quoting_spacing_flag_order_and_root_cd() -> None:
    base = shell_key("grep -rn foo src/")
    assert shell_key("cd /testbed &&   grep  -nr 'foo' ./src/") == base
    assert shell_key('grep -n -r "foo" src/') == base
    assert shell_key("grep -rn bar src/") != base


def test_cd_into_a_subdirectory_is_kept_by_normalisation() -> None:
    assert shell_key("cd src && ls") != shell_key("ls")


def test_unparseable_commands_fall_back_to_collapsed_text() -> None:
    assert shell_key("if (;  fi") == "raw:if (; fi"


def test_json_arguments_are_canonical_and_paths_stripped() -> None:
    a = tool_call_action("str_replace_editor", '{"path": "/testbed/a.py", "command": "view"}')
    b = tool_call_action("str_replace_editor", {"command": "view", "path": "a.py"})
    assert action_key(a) == action_key(b)
    assert canonical_arguments('{"file_path": "./x.py"}') == {"file_path": "x.py"}
    assert canonical_arguments("not json") == {"_raw": "not json"}


def test_shell_tools_compare_by_command_only() -> None:
    a = tool_call_action("execute_bash", {"command": "ls", "security_risk": "LOW"})
    assert action_key(a) == action_key(shell_action("ls", raw="ls"))
