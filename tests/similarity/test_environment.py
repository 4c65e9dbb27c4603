"""The sandbox facts the log gives the similarity (`builder.similarity.environment`), on the
real near-miss pairs that motivate each rule and the neighbours that must stay apart."""

from __future__ import annotations

from builder.ingest.formats.base import shell_action
from builder.similarity.actions import action_units
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import EMPTY, Environment, Turn, facts

COPY = "import django\nfrom django.db import models\nprint(models.Model.__name__)\n"
OTHER = "import django\nprint(django.VERSION)\n"


def _sh(command: str):
    return shell_action(command, raw=command, tool="bash")


def _turn(command: str, observation: str = "") -> Turn:
    return Turn(action_units(_sh(command)), observation)


def _write(path: str, text: str) -> str:
    return f"cat > {path} << 'EOF'\n{text}EOF"


def test_a_copy_under_another_name_runs_the_same_program() -> None:
    # django-12304 (round 3, design): check_metaclass_attr_2.py is a copy of the first script
    envs = facts([_turn(_write("check.py", COPY)), _turn(_write("check_2.py", COPY + "# again\n"))])
    a, b = _sh("python3 check.py"), _sh("python3 check_2.py")
    assert semantic(a, b) == 0.0
    assert semantic_in(envs[2])(a, b) == 1.0
    other = facts([_turn(_write("check.py", COPY)), _turn(_write("check_2.py", OTHER))])
    assert semantic_in(other[2])(a, b) == 0.0


def test_an_edit_of_the_script_itself_makes_another_program() -> None:
    turns = [
        _turn(_write("check.py", COPY)),
        _turn("python check.py"),
        _turn("sed -i 's/old/new/' django/db/models/base.py"),  # elsewhere: the same script
        _turn("sed -i 's/Model/Field/' check.py"),  # the script itself: another version
        _turn("python -u check.py"),
    ]
    envs = facts(turns)
    a, b = _sh("python check.py"), _sh("python check.py 2>&1")
    assert envs[3].scripts == envs[1].scripts
    assert semantic_in(envs[1], envs[3])(a, b) == 1.0
    assert envs[4].scripts["check.py"] != envs[1].scripts["check.py"]
    assert semantic_in(envs[1], envs[4])(a, b) == 0.0
    assert semantic_in(envs[4], envs[4])(a, b) == 1.0


def test_rewriting_a_script_changes_what_its_name_runs() -> None:
    envs = facts([_turn(_write("check.py", COPY)), _turn(_write("check.py", OTHER))])
    run = _sh("python check.py")
    assert semantic_in(envs[1], envs[2])(run, run) == 0.0
    assert semantic_in(envs[2], envs[2])(run, run) == 1.0


NO_MODULE = "<returncode>1</returncode>\n<output>\n/usr/bin/python3: No module named pytest\n"
NOT_FOUND = "bash: line 1: pytest: command not found\n"
RAN = "============ test session starts ============\ncollected 3 items\n\n3 passed in 0.2s\n"


def test_runs_in_interpreters_without_pytest_print_the_same_error() -> None:
    # sympy-16792 (round 5): `/usr/bin/python3 -m pytest f` vs `python -m pytest f`, no pytest
    turns = [
        _turn("/usr/bin/python3 -m pytest sympy/a/tests/test_x.py", NO_MODULE),
        _turn("pytest sympy/b/tests/test_y.py", NOT_FOUND),
        _turn("ls"),
    ]
    envs = facts(turns)
    assert envs[2].missing == frozenset({"/usr/bin/python3", "python"})
    a = _sh("/usr/bin/python3 -m pytest sympy/utilities/tests/test_codegen.py")
    b = _sh("python -m pytest sympy/utilities/tests/test_codegen.py -x")
    assert semantic(a, b) == 0.0
    assert semantic_in(envs[2])(a, b) == 1.0
    # the later side's own outcome is not read: one interpreter alone is not both
    hidden = facts(turns, unseen=(1,))
    assert hidden[2].missing == frozenset({"/usr/bin/python3"})
    assert semantic_in(hidden[2])(a, b) == 0.0


def test_a_runner_that_ran_or_was_installed_is_not_missing() -> None:
    ran = facts([_turn("pytest a/test_x.py", NOT_FOUND), _turn("pytest a/test_x.py", RAN)])
    assert ran[0].missing == {"python"} and ran[2].missing == frozenset()
    installed = facts([_turn("pytest t.py", NOT_FOUND), _turn("pip install pytest"), _turn("ls")])
    assert installed[1].missing == {"python"}
    assert installed[2].missing == frozenset()
    later = facts([_turn("ls"), _turn("pytest t.py", NOT_FOUND)])
    assert later[0].missing == {"python"}  # the first outcome after, no install between


def test_a_run_after_installing_pytest_in_the_same_line_is_a_real_run() -> None:
    env = Environment(missing=frozenset({"python"}))
    installed = _sh("pip install pytest && pytest tests/test_a.py")
    other = _sh("pip install pytest && pytest tests/test_b.py")
    assert semantic_in(env)(installed, other) == 0.0
    assert semantic_in(env)(_sh("pytest tests/test_a.py"), _sh("pytest tests/test_b.py")) == 1.0


def test_other_commands_and_runners_are_untouched() -> None:
    env = Environment(missing=frozenset({"python"}))
    assert semantic_in(env)(_sh("ls -la"), _sh("ls")) == semantic(_sh("ls -la"), _sh("ls"))
    a, b = _sh("python tests/runtests.py auth"), _sh("python tests/runtests.py admin")
    assert semantic_in(env)(a, b) == 0.0
    assert semantic_in(EMPTY) is semantic


def test_an_environment_survives_its_json_form() -> None:
    env = Environment({"a.py": "0123456789abcdef"}, frozenset({"python"}))
    assert Environment.from_dict(env.as_dict()) == env
