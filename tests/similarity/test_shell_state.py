"""An action that only changes the shell is compared by that change.

SWE-agent, OpenHands and Claude Code keep one shell across turns, so `export JAVA_HOME=...`
or `cd dir` on its own changes what every later command sees. Round 12's first look found the
gate calling two such actions with other values the same (both had no units left, and two
empty actions scored 1.0): `export JAVA_HOME=/usr/lib/jvm/java-11-openjdk-amd64` vs
`.../java-11-openjdk`, a held-out pair labelled "different" (SWE-agent 0.x, GPT-4o,
jackson-databind-3851).
"""

from __future__ import annotations

from builder.config.stages import GateConfig
from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from schemas.steps import Action

THETA = GateConfig().threshold


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


def test_exports_of_other_values_are_different() -> None:
    a = sh("export JAVA_HOME=/usr/lib/jvm/java-11-openjdk-amd64")
    b = sh("export JAVA_HOME=/usr/lib/jvm/java-11-openjdk")
    assert semantic(a, b) < THETA


def test_the_same_export_spelled_otherwise_is_the_same() -> None:
    a = sh("export JAVA_HOME=/usr/lib/jvm/java-11-openjdk")
    b = sh("export JAVA_HOME='/usr/lib/jvm/java-11-openjdk'")
    assert semantic(a, b) >= THETA


def test_changing_into_other_directories_is_different_and_root_prefixes_agree() -> None:
    assert semantic(sh("cd src"), sh("cd tests")) < THETA
    assert semantic(sh("cd /testbed/src"), sh("cd src")) >= THETA
    assert semantic(sh("cd src"), sh("export SRC=1")) < THETA


def test_commands_that_leave_the_shell_as_it_was_stay_nothing() -> None:
    # `sleep`, `true`, `clear` change no state: two of them do the same nothing
    assert semantic(sh("sleep 1"), sh("true")) >= THETA
    assert semantic(sh("cd src"), sh("sleep 1")) < THETA


def test_state_set_before_a_command_is_part_of_that_command_not_a_unit_of_its_own() -> None:
    a = sh("export DJANGO_SETTINGS_MODULE=a && python manage.py check")
    b = sh("export DJANGO_SETTINGS_MODULE=b && python manage.py check")
    assert semantic(a, b) < THETA
    same = sh("DJANGO_SETTINGS_MODULE=a python manage.py check")
    assert semantic(a, same) >= THETA
