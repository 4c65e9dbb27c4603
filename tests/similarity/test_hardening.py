"""The wrong passes of issue 10 fail the default gate; their truly-same neighbours still pass.

Since issue 26 the similarity is strict: a truncated output (`| head -50`, `| tail -20`) shows
a part of what the untruncated command shows and is another action unless the windows mostly
overlap, and a file filter (`--include`) on one side only is another search."""

from __future__ import annotations

import pytest

from builder.config.stages import GateConfig
from builder.ingest.formats.base import shell_action, tool_call_action
from builder.similarity.compare import get_similarity, semantic
from schemas.steps import Action

THETA = GateConfig().threshold
OLD = "    def get_latest_lastmod(self):\n        return max([self.lastmod(i) for i in items])"
NEW = (
    "    def get_latest_lastmod(self):\n"
    "        return max([self.lastmod(i) for i in items], default=None)"
)
OTHER = "    def items(self):\n        raise NotImplementedError('override items()')"
SCRIPT = "from django.contrib.sitemaps import Sitemap\nprint(Sitemap().get_latest_lastmod())\n"
OTHER_SCRIPT = "import os\nfor name in os.listdir('.'):\n    print(name.upper())\n"


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


def ed(**arguments: object) -> Action:
    return tool_call_action("str_replace_editor", arguments)


def claude(tool: str, **arguments: object) -> Action:
    return tool_call_action(tool, arguments)


PATH = "/testbed/django/contrib/sitemaps/__init__.py"

DIFFERENT: list[tuple[str, Action, Action]] = [
    (
        "str_replace: same anchor, unrelated new text",
        ed(command="str_replace", path=PATH, old_str=OLD, new_str=NEW),
        ed(command="str_replace", path=PATH, old_str=OLD, new_str=OTHER),
    ),
    (
        "editor create: same path, other content",
        ed(command="create", path="/testbed/reproduce.py", file_text=SCRIPT),
        ed(command="create", path="/testbed/reproduce.py", file_text=OTHER_SCRIPT),
    ),
    (
        "Claude Write: same path, other content",
        claude("Write", file_path="/repo/reproduce.py", content=SCRIPT),
        claude("Write", file_path="/repo/reproduce.py", content=OTHER_SCRIPT),
    ),
    (
        "Claude Edit: same anchor, unrelated new text",
        claude("Edit", file_path=PATH, old_string=OLD, new_string=NEW),
        claude("Edit", file_path=PATH, old_string=OLD, new_string=OTHER),
    ),
    (
        "bash heredoc: same path, other content",
        sh(f"cat <<'EOF' > reproduce.py\n{SCRIPT}EOF"),
        sh(f"cat <<'EOF' > reproduce.py\n{OTHER_SCRIPT}EOF"),
    ),
    ("basename vs a deeper path", sh("cat __init__.py"), sh(f"cat {PATH}")),
    ("cd into src vs the root file", sh("cd src && cat a.py"), sh("cat a.py")),
    ("git show of two commits", sh("git show abc1234"), sh("git show def5678")),
    ("git diff HEAD~1 vs worktree", sh("git diff HEAD~1"), sh("git diff")),
    ("git diff HEAD~1 vs staged", sh("git diff HEAD~1"), sh("git diff --cached")),
    ("git diff vs its stat", sh("git diff"), sh("git diff --stat")),
    (
        "grep vs a count of its matches",
        sh("grep -rn 'lastmod' django/contrib/sitemaps | wc -l"),
        sh("grep -rn 'lastmod' django/contrib/sitemaps"),
    ),
    ("run to a file vs run to the screen", sh("python r.py > out.txt"), sh("python r.py")),
    ("long listing vs recursive listing", sh("ls -la"), sh("ls -R")),
    (
        "find by another extension, same downstream grep",
        sh('find . -name "*.py" | grep sitemap'),
        sh('find . -name "*.html" | grep sitemap'),
    ),
    (
        "grep with a truncating head",
        sh("grep -rn 'lastmod' django/contrib/sitemaps | head -50"),
        sh("grep -rn 'lastmod' django/contrib/sitemaps"),
    ),
]

SAME: list[tuple[str, Action, Action]] = [
    (
        "str_replace: same anchor, new text differs in whitespace only",
        ed(command="str_replace", path=PATH, old_str=OLD, new_str=NEW),
        ed(
            command="str_replace",
            path="django/contrib/sitemaps/__init__.py",
            old_str=OLD,
            new_str=NEW.replace(", default", ",  default"),
        ),
    ),
    (
        "Claude Write: same path, same content",
        claude("Write", file_path="/repo/reproduce.py", content=SCRIPT),
        claude("Write", file_path="reproduce.py", content=SCRIPT + "\n"),
    ),
    (
        "root-prefixed vs relative path",
        sh(f"cat {PATH}"),
        sh("cat django/contrib/sitemaps/__init__.py"),
    ),
    ("cd prefix resolves the path", sh("cd src && cat a.py"), sh("cat src/a.py")),
    ("cd prefix vs a path argument", sh("cd src && ls"), sh("ls src")),
    ("trailing slash", sh("ls src/"), sh("ls src")),
    ("the same commit", sh("git show abc1234"), sh("git -C /testbed show abc1234")),
    ("--staged is --cached", sh("git diff --cached"), sh("git diff --staged")),
    ("flag order", sh("ls -la"), sh("ls -al")),
    ("stderr merged into the screen", sh("python r.py 2>&1"), sh("python r.py")),
    (
        "same find, same downstream grep, quoting",
        sh('find . -name "*.py" | grep sitemap'),
        sh("find . -name '*.py' | grep 'sitemap'"),
    ),
]


@pytest.mark.parametrize(("why", "a", "b"), DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_listed_wrong_passes_score_below_the_gate(why: str, a: Action, b: Action) -> None:
    assert semantic(a, b) < THETA
    assert semantic(b, a) < THETA


@pytest.mark.parametrize(("why", "a", "b"), SAME, ids=[s[0] for s in SAME])
def test_truly_same_pairs_still_pass(why: str, a: Action, b: Action) -> None:
    assert semantic(a, b) >= THETA
    assert semantic(b, a) >= THETA


@pytest.mark.parametrize(
    ("a", "b"),
    [("cd src && ls", "ls src"), ("ls src/", "ls src"), ("cd src && cat a.py", "cat src/a.py")],
)
def test_normalized_knows_cd_and_trailing_slash_equivalences(a: str, b: str) -> None:
    assert get_similarity("normalized")(sh(a), sh(b)) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cd src && python -m pytest", "python -m pytest src"),  # pytest's rootdir moves
        ("cd src && ls", "ls"),
        ("cd src && cat a.py", "cat a.py"),
    ],
)
def test_normalized_keeps_cd_where_it_changes_the_command(a: str, b: str) -> None:
    assert get_similarity("normalized")(sh(a), sh(b)) == 0.0


# found on the design split of the second mining round (benchmarks/mining_more.py)
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('grep -r "def loc" pandas/core | head -10', 'grep -r "def loc" pandas/core | tail -10'),
        ('find . -name "*.py" | grep -v tests | head -20', 'find . -name "*.py" | tail -20'),
        (
            'find /testbed -type f -name "*.py" | xargs grep -l "DatetimeIndex"',
            'find /testbed -type d -name "*.py" | xargs grep -l "DatetimeIndex"',
        ),
    ],
)
def test_tail_of_found_things_and_find_type_under_xargs_are_other_actions(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) < THETA


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('grep -r "def loc" pandas/core | head -10', 'grep -r "def loc" pandas/core | head -n 10'),
        (
            'find /testbed -type f -name "*.py" | xargs grep -l "DatetimeIndex"',
            'find /testbed -name "*.py" -type f | xargs grep -l DatetimeIndex',
        ),
    ],
)
def test_head_spellings_and_find_tests_in_any_order_stay_the_same(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('grep -r "def loc" pandas/core | head -10', 'grep -r "def loc" pandas/core'),
        ("python reproduce.py 2>&1 | tail -20", "python reproduce.py"),
    ],
)
def test_a_truncated_output_is_not_the_whole_output(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) < THETA


# found on the design split of the third mining round (benchmarks/mining_third.py)
def test_two_different_include_globs_search_other_files() -> None:
    a = 'grep -r "\\.freq" --include="*.py" pandas/core'
    assert semantic(sh(a), sh(a.replace("*.py", "*.pyx"))) < THETA
    assert semantic(sh(a), sh(a.replace('--include="*.py"', "--include '*.py'"))) == 1.0
    assert semantic(sh(a), sh('grep -r "\\.freq" pandas/core')) < THETA  # one side unscoped


def test_a_file_of_the_same_name_in_another_directory_is_another_file() -> None:
    a = ed(command="view", path="/testbed/moto/cognitoidentity/responses.py")
    b = ed(command="view", path="/testbed/moto/core/responses.py")
    assert semantic(a, b) < THETA
    assert (
        semantic(a, ed(command="view", path="/testbed/./moto/cognitoidentity/responses.py"))
        >= THETA
    )
