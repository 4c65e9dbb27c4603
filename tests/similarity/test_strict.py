"""The seven failure classes of issue 26, each on real pairs: actions an agent issued a few
steps apart in a real run, verbatim. Each pair passed the gate under the bag-of-words
similarity it replaced (the old score is in the comment, measured on the parent commit at
θ = 0.65); the strict similarity and the `agree` gate tell them apart. Most pairs are rows of
the near-miss benchmark (`near_misses/pairs.jsonl`, by key, with their source there); the
others name their source here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.config.stages import GateConfig
from builder.ingest.formats.base import shell_action, tool_call_action
from builder.nap.gate import GateRule, verdict
from builder.similarity.compare import semantic
from schemas.steps import Action

THETA = GateConfig().threshold
BENCHMARK = Path(__file__).parent / "near_misses" / "pairs.jsonl"
ROWS = {row["key"]: row for row in map(json.loads, BENCHMARK.read_text().splitlines())}
PYLINT_6528 = "gruckion/mini-swe-agent@d12a71affd95:.../pylint-dev__pylint-6528.traj.json"


def act(spec: dict) -> Action:
    if "command" in spec:
        return shell_action(spec["command"], raw=spec["command"], tool=spec["tool"])
    return tool_call_action(spec["tool"], spec["arguments"])


def pair(key: str) -> tuple[Action, Action, bool]:
    row = ROWS[key]
    return act(row["a"]), act(row["b"]), row["same"]


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


def differ(key: str) -> None:
    a, b, same = pair(key)
    assert not same, ROWS[key]["reason"]
    assert semantic(a, b) < THETA and semantic(b, a) < THETA, ROWS[key]["reason"]


# 1. code and edit content are compared as code, not as bags of words


@pytest.mark.parametrize(
    "key",
    [
        "445ace592d503a6e",  # open(f, "wb+") vs "wb" (pytest-5262; old 1.0)
        "c789c806e50d7356",  # `class A: pass; print(str(A))` on one line: NameError (old 1.0)
        "2fae83bb24f26aec",  # the same one-liner trick with a TextChoices class (old 1.0)
        "af325189189f1659",  # ForeignKey('Category') vs ('DJ_RegLogin.Category') (old 1.0)
        "bd49a17124c8c833",  # a script writing lines indented by 4 more spaces (old 1.0)
        "fa02faa9add19563",  # an import moved before settings.configure() (old 0.99)
        "f962f39fc34089ba",  # a replacement line unindented vs indented (marshmallow; old 1.0)
    ],
)
def test_code_and_edits_that_differ_in_operators_literals_or_indentation(key: str) -> None:
    differ(key)


def test_the_same_code_spelled_differently_is_the_same() -> None:
    a, b, same = pair("d526822d3d227bdc")  # quoting differs, the syntax tree does not
    assert same and semantic(a, b) == 1.0


# 2. options, arguments and environment that change behaviour are part of the identity


@pytest.mark.parametrize(
    "key",
    [
        "3d6343430ca41925",  # django-admin ... --skip-checks vs without (old 0.84)
        "0f14b3003343cc2d",  # python3 -X foo=bar reproduce_issue.py vs without (old 0.75)
        "d15ae878f63b3514",  # pylint --ignore=a vs --ignore=.a (old 0.83)
        "365d877e006010c3",  # sphinx-build -E (fresh environment) vs without (old 0.91)
        "287113bf637c9491",  # pytest -rx --runxfail vs without (old 0.92)
        "02288672eb611a80",  # python -u into a file of a server killed after 5 s (old 0.97)
    ],
)
def test_options_arguments_and_wrappers_that_change_behaviour(key: str) -> None:
    differ(key)


def test_pylint_ignore_vs_ignore_paths_and_norecursedirs_values() -> None:
    # verbatim from PYLINT_6528 (messages 150, 156) and pytest-7982 (76, 92): old 0.83, 0.75
    assert (
        semantic(
            sh("cd reproduction && pylint --recursive=y --ignore=a ."),
            sh("cd reproduction && pylint --recursive=y --ignore-paths=.a ."),
        )
        < THETA
    )
    assert (
        semantic(
            sh('python3 -m pytest -o "norecursedirs=should_be_ignored" reproduce_issue'),
            sh(
                'python3 -m pytest -o "norecursedirs=should_be_ignored '
                'symlink_to_should_be_ignored" reproduce_issue'
            ),
        )
        < THETA
    )


def test_environment_wrappers_and_redirections_from_the_issue() -> None:
    # the issue's own examples (real runs outside this benchmark's corpus; all old 1.0)
    run = "python manage.py check"
    assert (
        semantic(sh(f"DJANGO_SETTINGS_MODULE=a {run}"), sh(f"DJANGO_SETTINGS_MODULE=b {run}")) == 0
    )
    assert semantic(sh("timeout 60 python reproduce.py"), sh("python reproduce.py")) == 0
    assert semantic(sh("python reproduce.py 2>/dev/null"), sh("python reproduce.py")) == 0
    assert semantic(sh("pytest tests/ | head -50"), sh("pytest tests/ | tail -50")) == 0
    assert semantic(sh("cd docs && make html"), sh("make html")) == 0
    assert semantic(sh("python -X dev -m pytest"), sh("python -m pytest")) == 0


def test_time_only_adds_its_report() -> None:
    """Round 3 design pair sympy-13878: `python3 debug_uniformsum_2.py` and `time python3
    debug_uniformsum_2.py` log the same lines; `time` appends real/user/sys. With options it
    stays (`-o F` writes a file, `-v` a long report)."""
    run = "python3 debug_uniformsum_2.py"
    assert semantic(sh(f"time {run}"), sh(run)) == 1.0
    assert semantic(sh(f"time {run}"), sh("time python3 debug_uniformsum_3.py")) == 0
    assert semantic(sh(f"time -o t.txt {run}"), sh(run)) == 0
    assert semantic(sh(f"time timeout 60 {run}"), sh(run)) == 0


# 3. every command of a chain is aligned and must match


def test_one_identical_command_does_not_carry_a_different_one() -> None:
    differ("0bf843b8407d8a58")  # four identical seds, B adds a read (old 0.8)
    differ("d67891946ee8950f")  # rm of five files vs four, then the same rm -rf (old 0.98)
    differ("e6b71d95be9c542f")  # the same cd and rm, then migrate vs migrate testapp1 (old 0.75)
    deleted = "sed -i '1138,{}d' sympy/polys/factortools.py && sed -i '1130d' f.py"
    assert semantic(sh(deleted.format(1165)), sh(deleted.format(1181))) == 0  # issue's (0.75)


def test_what_runs_only_on_failure_is_not_what_runs_on_success() -> None:
    """Bash runs the right side of `||` only when the left fails, of `&&` only when it succeeds
    (bash manual, "Lists of Commands"). No real pair yet: in the 644 round-9 near misses every
    `||` guards a `true` or an `echo`, which stay harmless; these were 1.0 before."""
    assert semantic(sh("make || rm -rf build"), sh("make && rm -rf build")) == 0
    assert semantic(sh("make || rm -rf build"), sh("make; rm -rf build")) == 0
    assert (
        semantic(
            sh("pip install -e . || (cd src && make)"), sh("pip install -e . && (cd src && make)")
        )
        == 0
    )
    assert (
        semantic(sh("grep -q x f || sed -i 's/a/b/' f"), sh("grep -q x f || sed -i 's/a/b/' f"))
        == 1
    )
    assert semantic(sh("grep -rn x src || true"), sh("grep -rn x src")) == 1


# 4. the aggregate cannot be outvoted: k of n references must agree


def test_one_exact_reference_and_two_near_misses_do_not_pass() -> None:
    """Real references: the pylint-6528 agent's own variants of one command (m24, m28, m38),
    then unrelated actions of the run. Under the mean of the top 3 the exact match and the
    two near misses (0.83 each under the old similarity) passed together (0.89 >= 0.65)."""
    candidate = sh("cd reproduction && pylint --recursive=y --ignore=a .")
    references = [
        sh("cd reproduction && pylint --recursive=y --ignore=a ."),
        sh("cd reproduction && pylint --recursive=y --ignore=.a ."),
        sh("cd reproduction && pylint --recursive=y --ignore-paths=.a ."),
        sh("ls -la reproduction"),
        sh('grep -rn "ignore-paths" pylint/lint/'),
        sh("cat pylint/lint/expand_modules.py"),
        sh("git diff"),
        sh("python -m pytest tests/lint/unittest_expand_modules.py"),
    ]
    sims = [semantic(candidate, r) for r in references]
    assert sims[0] == 1.0 and max(sims[1:]) < THETA
    score, passed = verdict(sims, GateRule("agree", THETA, min_agree=2, min_references=4))
    assert (score, passed) == (1 / 8, False)
    assert verdict(sims[:1] * 2 + sims[1:7], GateRule("agree", THETA, 3, 2, 4))[1]


# 5. logged-reference mode compares whole turns: see tests/steps/test_pairing.py and
#    tests/nap/test_agent_reply.py (a real Claude Code turn of two Bash calls)

# 6. search and list: the pattern, the scope and the listing are the action


@pytest.mark.parametrize(
    "key",
    [
        "39fa905a802d1b85",  # grep "\^\\dagger" vs "dagger" (executed: other lines; old 1.0)
        "8d48c2b2210fc7d5",  # "_op_priority" vs "_op_priority =" (executed; old 0.98)
        "00557691fc3bef84",  # "assumptions0 =" vs "assumptions0" (old 0.85)
    ],
)
def test_search_patterns_scopes_and_listings(key: str) -> None:
    differ(key)


def test_search_and_list_examples_of_the_issue() -> None:
    # the issue's own examples: old 1.0, 0.989, 0.902, and 1.0 for each listing
    assert semantic(sh('grep "^def " a.py'), sh('grep "def " a.py')) == 0
    assert semantic(sh("grep -rn sitemap ."), sh("grep -rn sitemaps .")) == 0
    assert semantic(sh("grep -rn x django"), sh("grep -rn x django/contrib/admin")) == 0
    for other in ("find tests -type f", "tree -L 2 tests", "du -sh tests"):
        assert semantic(sh("ls tests"), sh(other)) == 0


# 7. submits: what is submitted counts


@pytest.mark.parametrize(
    "key",
    [
        "c1377fa665ed6c61",  # submit flat{...} vs flag{...} (SWE-agent CTF eps; old 1.0)
        "7660e9d5e40981f3",  # unquoted flag split into words vs quoted (old 1.0)
        "1872f7bb2fd1876f",  # backslashes the shell drops vs keeps (old 1.0)
    ],
)
def test_submissions_of_different_flags(key: str) -> None:
    differ(key)


def test_printing_the_marker_is_not_submitting_the_diff() -> None:
    full = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
    assert semantic(sh(full), sh("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")) == 0
    assert semantic(sh(full), sh(full.replace(" && ", " &&  "))) == 1.0


# the same action, spelled differently: canonical forms the strictness must keep


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cat a.py | grep -n 'def '", "grep -n 'def ' a.py"),  # the same lines reach grep
        ("cat a.py | wc -l", "wc -l a.py"),
        ("python3 -m pylint mytest.py -v -rn", "python3 -m pylint mytest.py --verbose"),
        ("python -m pip install -e ./", "pip install -e ."),
        ('find . -name "*.py" -path "*x*"', "find . -path '*x*' -name '*.py'"),
        ("git log --oneline -5", "git log --oneline -n 5"),
        ("cd /testbed && ls -F django/db/", "ls django/db"),
        ("python -c 'print(1);print(2)'", "python3 - <<'EOF'\nprint(1)\nprint(2)\nEOF"),
    ],
)
def test_canonical_spellings_of_one_action(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 1.0


def test_a_piped_cat_of_another_file_stays_another_search() -> None:
    assert semantic(sh("cat a.py | grep -n 'def '"), sh("grep -n 'def ' b.py")) == 0.0
    assert semantic(sh("cat a.py b.py | grep x"), sh("grep x a.py")) == 0.0


def test_openhands_file_skills_are_editor_calls() -> None:
    """An IPython cell calling `edit_file_by_replace` (OpenHands v0 resolver run) is the
    str_replace_editor call with the same file and texts."""
    cell = tool_call_action(
        "execute_ipython_cell",
        {
            "code": "edit_file_by_replace('/workspace/a.py', "
            "to_replace='x = 1', new_content='x = 2')"
        },
    )
    editor = tool_call_action(
        "str_replace_editor",
        {"command": "str_replace", "path": "/workspace/a.py", "old_str": "x = 1", "new_str": "x=2"},
    )
    assert semantic(cell, editor) == 1.0
    other = editor.arguments.replace("x=2", "x=3")
    assert semantic(cell, tool_call_action("str_replace_editor", other)) == 0.0
