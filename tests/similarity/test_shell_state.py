"""An action that only changes the shell is compared by that change, and a shell kept across
turns is read from where it was left.

SWE-agent, OpenHands and Claude Code keep one shell across turns, so `export JAVA_HOME=...`
or `cd dir` on its own changes what every later command sees. Round 12's first look found the
gate calling two such actions with other values the same (both had no units left, and two
empty actions scored 1.0): `export JAVA_HOME=/usr/lib/jvm/java-11-openjdk-amd64` vs
`.../java-11-openjdk`, a held-out pair labelled "different" (SWE-agent 0.x, GPT-4o,
jackson-databind-3851).
"""

from __future__ import annotations

import json

from builder.config.stages import GateConfig
from builder.ingest.formats.base import shell_action
from builder.ingest.formats.mini_swe_agent import ADAPTER as MINI
from builder.ingest.formats.openhands_v0 import ADAPTER as OPENHANDS
from builder.similarity.canonical import shell_cwd
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import Environment, facts
from builder.steps.log_turns import log_turns
from schemas.steps import Action
from schemas.trajectories import Message, ToolCall, TrajectoryRecord

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


# --- where a shell kept across turns is (SWE-agent, OpenHands) -------------------------------


def _kept_shell_run(*commands: str, observations: tuple[str, ...] = ()) -> TrajectoryRecord:
    messages = [Message("user", "task")]
    for i, command in enumerate(commands):
        call = ToolCall(f"c{i}", "execute_bash", json.dumps({"command": command}))
        out = observations[i] if i < len(observations) else "ok"
        messages += [Message("assistant", "", [call]), Message("tool", out, tool_call_id=f"c{i}")]
    return TrajectoryRecord(
        "t", "x", "x", 0, None, "openhands", None, None, "task", None, None, messages
    )


def test_a_cd_in_a_chain_moves_the_shell_but_one_in_a_subshell_does_not() -> None:
    assert shell_cwd("cd src/main && ls") == "src/main"
    assert shell_cwd("cd /testbed/src && ls", None) == "/testbed/src"
    assert shell_cwd("ls", "src") == "src"
    assert shell_cwd("(cd src && ls)") is None


def test_relative_paths_are_read_from_where_the_kept_shell_is() -> None:
    a, b = sh("cat Foo.java"), sh("cat /repo/Foo.java")
    assert semantic(a, b) >= THETA  # both from the repository root
    moved = semantic_in(Environment(cwd="/repo/src/main"))
    assert moved(a, b) < THETA  # `src/main/Foo.java` is another file
    assert moved(a, sh("cat /repo/src/main/Foo.java")) >= THETA
    assert moved(a, a) == 1.0


def test_the_log_carries_the_directory_a_kept_shell_was_left_in() -> None:
    traj = _kept_shell_run(
        "cd src/main && ls",
        "cat Foo.java",
        "cd nowhere",
        "cat Bar.java",
        "cd /repo",
        "ls",
        observations=("Foo.java", "x", "bash: cd: nowhere: No such file or directory"),
    )
    _, turns = log_turns(traj, OPENHANDS)
    assert [t.cwd for t in turns] == [None, "src/main", "src/main", "src/main", "src/main", None]
    envs = facts(turns)
    assert envs[1].cwd == "src/main" and envs[5].cwd is None
    # the same commands under a harness that gives every command a fresh subshell
    _, fresh = log_turns(traj, MINI)
    assert all(t.cwd is None for t in fresh)
