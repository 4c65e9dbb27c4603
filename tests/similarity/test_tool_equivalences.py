"""Equivalences that come from how a tool reads its command line (its documentation or
source), each with the real pair that motivated it and the near neighbours that must stay
different, so a rule that grew too wide fails here."""

from __future__ import annotations

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from schemas.steps import Action


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


def same(a: str, b: str) -> bool:
    score = semantic(sh(a), sh(b))
    assert score == semantic(sh(b), sh(a))
    return score == 1.0


def test_pylint_strips_the_items_of_its_comma_lists() -> None:
    # pylint-dev__pylint-8898 m92-m94 (near-miss design pair 990ea839657007e1)
    assert same(
        'pylint --bad-names-rgxs="foo,bar" foo.py', 'pylint --bad-names-rgxs="foo, bar" foo.py'
    )
    assert same(
        "python3 -m pylint --disable='C0114, C0115' a.py",
        "python3 -m pylint --disable=C0114,C0115 a.py",
    )
    assert same("flake8 --select='E1, W2' a.py", "flake8 --select=E1,W2 a.py")
    # another item, another file, or a tool that keeps the spaces: still different
    assert not same(
        'pylint --bad-names-rgxs="foo,baz" foo.py', 'pylint --bad-names-rgxs="foo, bar" foo.py'
    )
    assert not same(
        'pylint --bad-names-rgxs="foo,bar" a.py', 'pylint --bad-names-rgxs="foo, bar" b.py'
    )
    assert not same("mytool --names='a, b'", "mytool --names=a,b")
    assert not same("grep -e 'a, b' f", "grep -e a,b f")


def test_a_self_documenting_fstring_prints_the_value_it_labels() -> None:
    # sympy__sympy-20801 m28-m30 (near-miss design pair 915a1ae8ea9cf8d7)
    plain = """python -c "from sympy import S; print(S(0) == False)\""""
    labelled = """python -c "from sympy import S; print(f'{S(0) == False=}')\""""
    assert same(plain, labelled)
    # another expression under the label, or a repr / format spec without one: different
    assert not same(plain, """python -c "from sympy import S; print(f'{S(0) == True=}')\"""")
    assert not same("""python -c "x='a'; print(x)\"""", """python -c "x='a'; print(f'{x!r}')\"""")
    assert not same("""python -c "x='a'; print(x)\"""", """python -c "x='a'; print(f'{x:>5}')\"""")
    # a label that does not end in '=' does not make a repr the same
    assert not same(
        """python -c "x='a'; print(x)\"""", """python -c "x='a'; print(f'x: {x!r}')\""""
    )


@pytest.mark.parametrize(
    "prefix",
    ["PYTHONPATH=. ", "PYTHONPATH=$PYTHONPATH:. ", "export PYTHONPATH=.:$PYTHONPATH\n"],
)
def test_pythonpath_of_the_working_directory_is_a_noop_where_python_adds_it(prefix: str) -> None:
    # django__django-14672 m6-m10: `python3 reproduce_issue.py` with and without PYTHONPATH=.
    for command in (
        "python3 reproduce_issue.py",
        "python -c 'import django'",
        "python -m django --version",
    ):
        assert same(command, prefix + command)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # the script's own directory is first on sys.path, not the working directory
        ("python3 tests/runtests.py i18n", "PYTHONPATH=. python3 tests/runtests.py i18n"),
        # console scripts live in bin/: the checkout is importable only through PYTHONPATH
        ("pytest tests/a.py", "PYTHONPATH=. pytest tests/a.py"),
        ("django-admin check", "PYTHONPATH=. django-admin check"),
        # another directory on the path
        ("python -c 'import a'", "PYTHONPATH=src python -c 'import a'"),
        ("python -c 'import a'", "PYTHONPATH=.:src python -c 'import a'"),
        # another variable
        ("python -c 'import a'", "DJANGO_SETTINGS_MODULE=. python -c 'import a'"),
    ],
)
def test_pythonpath_that_changes_what_is_importable_is_kept(a: str, b: str) -> None:
    assert not same(a, b)


def test_pylint_reports_off_restate_the_default_and_verbose_mode_is_kept() -> None:
    # pylint-6386 (design pairs 554e1ceb950ba2d7 and 8de6f1e06e132f74 of round 3)
    assert same("pylint a.py --reports=no", "pylint a.py")
    assert same("python3 -m pylint mytest.py -rn", "python3 -m pylint mytest.py")
    # its logs: a separate -v prints "Using config file", a run without it does not
    # (design pairs 21c22c2321bacc9c, bbdf88473c0c5fb7, fd04610e85048f1f, adjudicated)
    assert not same("python3 -m pylint mytest.py", "python3 -m pylint mytest.py -v -rn")
    assert not same("python3 -m pylint mytest.py --verbose", "python3 -m pylint mytest.py -rn")
    # -r takes a value: `-rn` is not `-r -n`; reports on, errors only: not the default
    assert not same("pylint a.py", "pylint a.py -ry")
    assert not same("pylint a.py", "pylint a.py -E")
    assert not same("pylint a.py -rn", "pylint a.py -d=C0114")


def test_pylint_drops_empty_items_of_its_comma_lists() -> None:
    # pylint's _splitstrip keeps only non-empty items (a held-out pair of round 1 and one of
    # round 2, pylint-8898, were missed before this rule)
    assert same(
        'pylint --bad-names-rgxs="foo, bar" foo.py', 'pylint --bad-names-rgxs="foo,,bar" foo.py'
    )
    assert not same(
        'pylint --bad-names-rgxs="foo,bar" foo.py', 'pylint --bad-names-rgxs="foo,,baz" foo.py'
    )


def test_sphinx_build_verbosity_is_the_log_only() -> None:
    build = "cd reproduce_issue && sphinx-build -a -b html . _build/html"
    assert same(build, build.replace("sphinx-build", "sphinx-build -v"))
    assert same(build, build.replace("sphinx-build", "sphinx-build -vv"))
    # another builder, all files or not, quiet (-Q hides the warnings): different
    assert not same(build, build.replace("-b html", "-b latex"))
    assert not same(build, build.replace(" -a", ""))
    assert not same(build, build.replace("sphinx-build", "sphinx-build -Q"))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # django-11964: `class` after `;` fails before anything runs, however the print is labelled
        (
            "python3 -c \"from django.db import models; class C(models.TextChoices): A='a'; "
            "print(f'{str(C.A)=}')\"",
            "python3 -c \"from django.db import models; class C(models.TextChoices): A='a'; "
            "print('str(C.A)=' + str(C.A))\"",
        ),
        ("python -c 'import os;  class E: pass'", "python -c 'import os; class E: x = 1'"),
    ],
)
def test_two_one_liners_that_fail_alike_to_parse_print_the_same_error(a: str, b: str) -> None:
    assert same(a, b)


def _trapped(check: str, extra: str = "") -> str:
    """A patch script and a check in one heredoc trap: `PY && python - <<'PY'` does not end
    the first heredoc, so python reads both as one program and stops on that line."""
    return (
        "python - <<'PY'\n"
        "from pathlib import Path\n"
        "p = Path('pkg/sep.py')\n"
        "s = p.read_text()\n"
        f"{check}\n"
        "    print('patched')\n"
        f"{extra}"
        "PY && python - <<'PY'\n"
        "import pkg\n"
        "print(pkg.sep())\n"
        "PY"
    )


def test_two_scripts_caught_in_one_heredoc_trap_print_the_same_syntax_error() -> None:
    # astropy__astropy-12907 under GPT-5-mini (round 9 design pair 2, not committed: no
    # licence): the if/else above the trapped line differs, nothing runs, python prints
    # the same SyntaxError at the same line
    a = _trapped("if 'x' in s:\n    p.write_text(s.replace('x', 'y'))")
    b = _trapped("if 'x' not in s:\n    raise SystemExit(1)")
    assert same(a, b)
    # the same line text at another line number is another message (the sklearn pair of
    # that split, which its labeller called "same", stays apart: the output differs)
    assert not same(a, _trapped("if 'x' in s:\n    p.write_text(s)", "print(s)\n"))
    # once the heredoc is closed, both scripts run and differ
    closed = ("PY && python", "PY\npython")
    assert not same(a.replace(*closed), b.replace(*closed))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # the same error after other text: another import ran in neither, but the agent
        # sees its own other line; kept apart (strict)
        ("python -c 'import os; class E: pass'", "python -c 'import sys; class E: pass'"),
        # one parses (two lines), the other does not
        ("python -c 'x = 1; class A: pass'", "python -c 'x = 1\nclass A: pass'"),
        # code written into a file is compared whole, broken or not
        (
            "cat <<'EOF' > a.py\nx = 1; class A: pass\nEOF",
            "cat <<'EOF' > a.py\nx = 1; class A: y = 2\nEOF",
        ),
    ],
)
def test_broken_code_that_differs_before_the_error_or_is_not_run(a: str, b: str) -> None:
    assert not same(a, b)


def test_pythonpath_spellings_of_one_path() -> None:
    # django-15554 (round 3 design pair 552f2878850e87f9): inline vs exported, inherited path
    runtests = "/usr/bin/python3 ./tests/runtests.py filtered_relation"
    assert same(f"PYTHONPATH=. {runtests}", f"export PYTHONPATH=$PYTHONPATH:.\n{runtests}")
    assert same(f"PYTHONPATH=./ {runtests}", f"PYTHONPATH=.:. {runtests}")
    assert not same(f"PYTHONPATH=. {runtests}", f"PYTHONPATH=./src {runtests}")
    assert not same(f"PYTHONPATH=. {runtests}", f"PYTHONPATH=.:src {runtests}")
    assert not same(f"PYTHONPATH=. {runtests}", runtests)


def test_pytest_report_chars_are_the_value_of_r() -> None:
    # round 3 design pair 8316a492c0b2b2c5: `-rsx -s` adds -s (no capture) to `-rsx`
    assert not same("pytest -rsx reproduce_issue.py", "pytest -rsx -s reproduce_issue.py")
    assert not same("pytest -rsx a.py", "pytest -rX a.py")
    assert same("pytest -rsx a.py", "pytest -r sx a.py")
    assert not same("pytest -W ignore a.py", "pytest a.py")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("python3 -m pylint mytest.py --verbose", "python3 -m pylint mytest.py -v"),
        ("pylint a.py --disable=C0114", "pylint a.py -d C0114"),
        ("pytest --exitfirst a.py", "pytest -x a.py"),
        ("pytest --capture=no a.py", "pytest -s a.py"),
        ("grep --ignore-case -n foo a.py", "grep -in foo a.py"),
        ("grep --after-context 5 foo a.py", "grep -A5 foo a.py"),
        ("python3 -m reproduce_issue.pkg.subpkg", "python3 -m reproduce_issue.pkg.subpkg.__main__"),
        # a `v` in a pylint bundle does nothing (only a whole -v reaches its preprocessing):
        # pylint-6386 logs -vrn and -rn alike (design pair 8de6f1e06e132f74 of round 3)
        ("python3 -m pylint mytest.py -rn", "python3 -m pylint mytest.py -vrn"),
        ("python3 -m pylint mytest.py", "python3 -m pylint mytest.py -vrn"),
    ],
)
def test_two_spellings_of_one_option_or_module(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("pylint a.py --disable=C0114", "pylint a.py -e C0114"),
        ("pytest --capture=sys a.py", "pytest -s a.py"),
        ("grep --invert-match foo a.py", "grep -i foo a.py"),
        ("grep --after-context 5 foo a.py", "grep -B5 foo a.py"),
        ("python3 -m pkg.sub", "python3 -m pkg.sub.main"),
        # pylint-6386's logs, one state: -v -rn verbose, -vrn not (0a28dcb4a407424b)
        ("python3 -m pylint mytest.py -v -rn", "python3 -m pylint mytest.py -vrn"),
        ("python3 -m pylint mytest.py -v", "python3 -m pylint mytest.py -vrn"),
        # only pylint's bundles lose their v: grep -vn inverts the match
        ("grep -vn foo a.py", "grep -n foo a.py"),
    ],
)
def test_other_options_stay_apart(a: str, b: str) -> None:
    assert not same(a, b)


RUNTESTS = "cd /testbed && python tests/runtests.py db_functions.datetime.test_extract_trunc"


def test_django_verbosity_takes_a_value_or_nothing_runs() -> None:
    # round 7 design pair bdd29ad79a7bfc00 (SWE-agent, django): a bare trailing `-v` is
    # argparse's usage error (`-v/--verbosity` is `type=int, choices=[0, 1, 2, 3]` in
    # tests/runtests.py and every management command), so no test runs; with a value it is
    # only how much is logged
    assert not same(f"{RUNTESTS} -v", f"{RUNTESTS} --verbosity=2")
    assert not same(f"{RUNTESTS} -v", RUNTESTS)
    assert not same(f"{RUNTESTS} -v 4", f"{RUNTESTS} -v 2")  # 4 is not a choice
    assert not same(f"{RUNTESTS} -v foo.tests", f"{RUNTESTS} foo.tests")
    assert same(f"{RUNTESTS} -v 2", f"{RUNTESTS} --verbosity=2")
    assert same(f"{RUNTESTS} -v2", RUNTESTS)
    assert same(f"{RUNTESTS} --verbosity 3 --parallel 1", RUNTESTS)
    # two usage errors print the same usage, whatever the labels
    assert same(f"{RUNTESTS} -v", "python tests/runtests.py other_app -v")
    assert not same(f"{RUNTESTS} -v 2", "python tests/runtests.py other_app -v 2")


def test_django_management_verbosity_is_the_log_only() -> None:
    # round 7 design pair 15667e913d5e74c3: `python -m django test LABEL` with and without
    # `-v 2` (the 2 is the option's value, not a second label)
    test = "cd /testbed && python -m django test admin_views.tests.AdminViewsTests.test_a"
    assert same(test, f"{test} -v 2")
    assert same("python manage.py test app -v2", "./manage.py test app")
    assert same("django-admin test app --verbosity 0", "django-admin test app")
    assert not same(test, f"{test} -v")  # usage error
    assert not same(test, f"{test} -v 2 --settings=other")
    assert not same(test, "cd /testbed && python -m django test admin_views.tests")
    # other runners: manage.py sets the project's settings, `-m django` does not
    assert not same("python manage.py test app", "python -m django test app")
    assert not same("python manage.py test app", "django-admin test app")


def test_pytest_verbosity_counts_where_it_decides_what_is_listed() -> None:
    # round 7 held-out pair 221346146a18e383 (pytest-dev, a private fixture's name): with
    # `--fixtures`, fixtures whose name starts with `_` are listed "only with -v" (pytest --help)
    fixtures = "cd /testbed && python -m pytest reproduce.py --fixtures"
    assert not same(fixtures, f"{fixtures} -v")
    assert not same("pytest a.py --fixtures-per-test", "pytest a.py --fixtures-per-test -v")
    assert same(f"{fixtures} -vv", f"{fixtures} --verbose")
    # elsewhere -v is still the log only
    assert same("python -m pytest reproduce.py -v", "python -m pytest reproduce.py")


_CHECK = """from app.forms import to_dict
inst = make()
{0}print(to_dict(inst)){1}
{2}print(to_dict(inst, fields=[])){1}
assert to_dict(inst, fields=[]) == {{}}
print('ALL TESTS PASSED')
"""


def test_top_level_text_prints_are_labels_that_show_no_value() -> None:
    # django-11163, round 9 design (GPT-5-mini): one script prints each label on its own line
    # before the value, the other beside it; the same values and assertions
    apart = _CHECK.format("print('fields=None -> expect a, b')\n", "", "print('fields=[] ->')\n")
    beside = "\n".join(
        line.replace("print(to_dict", "print('label ->', to_dict")
        for line in _CHECK.format("", "", "").splitlines()
    )
    assert same(f"python3 - <<'PY'\n{apart}PY", f"python3 - <<'PY'\n{beside}\nPY")
    assert same(f'python -c "{apart}"', f'python -c "{_CHECK.format("", "", "")}"')


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # inside a branch a text print says which way the code went
        (
            "python -c \"if ok():\n    print('patched')\nelse:\n    print('not found')\"",
            "python -c \"if ok():\n    print('not found')\nelse:\n    print('patched')\"",
        ),
        # sympy-22080, round 2 design pair 8b0a0b2555cbcd5b: an unused import checks it installs
        (
            "python -c \"import numpy; print('installed')\"",
            "python -c \"import mpmath; print('installed')\"",
        ),
        # a text print with `end=`/`file=` is kept whole
        ("python -c \"print('x', end=''); f()\"", 'python -c "f()"'),
    ],
)
def test_text_prints_that_say_something_stay(a: str, b: str) -> None:
    assert not same(a, b)


def test_an_unused_standard_library_import_changes_nothing_run() -> None:
    # django-11451 (design, rounds 1-2): the same file rewrite with and without `import sys`
    body = "path = 'a.py'\nlines = open(path).readlines()\nopen(path, 'w').writelines(lines)\n"
    assert same(f'python3 -c "import sys\n{body}"', f'python3 -c "{body}"')
    assert not same(f'python3 -c "import yaml\n{body}"', f'python3 -c "{body}"')
