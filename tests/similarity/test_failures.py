"""A script's traceback in the log: every script with the same statements up to where it
stopped prints the same (`similarity.failures`), read through the log (`log_turns`)."""

from __future__ import annotations

import json

from builder.config.stages import GateConfig
from builder.ingest.formats.base import shell_action
from builder.ingest.formats.openhands_v0 import ADAPTER as OPENHANDS
from builder.similarity.compare import semantic_in
from builder.similarity.environment import facts
from builder.similarity.failures import failed_prefix, prefix_digests
from builder.steps.log_turns import log_turns
from schemas.trajectories import Message, ToolCall, TrajectoryRecord

THETA = GateConfig().threshold
SETUP = (
    "import django\n"
    "from django.conf import settings\n"
    "settings.configure(INSTALLED_APPS=['django.contrib.contenttypes'])\n"
    "django.setup()\n"
    "from django.db import models\n"
    "\n"
    "class MyModel(models.Model):\n"
    "    name = models.CharField(max_length=10)\n"
)
FIX = SETUP + "print(MyModel._meta.db_table)\n"
MIGRATION = SETUP + "from django.db.migrations.state import ModelState\nprint(ModelState)\n"
OTHER = SETUP.replace("max_length=10", "max_length=20") + "print(MyModel._meta.db_table)\n"
TRACEBACK = (
    "Traceback (most recent call last):\r\n"
    '  File "/testbed/{name}", line 7, in <module>\r\n'
    "    class MyModel(models.Model):\r\n"
    '  File "/testbed/django/db/models/base.py", line 113, in __new__\r\n'
    "RuntimeError: Model class __main__.MyModel doesn't declare an explicit app_label\r\n"
)


def test_the_statement_a_traceback_stops_at_gives_the_prefix_others_are_matched_by() -> None:
    stop = failed_prefix("test_fix.py", FIX, TRACEBACK.format(name="test_fix.py"))
    assert stop is not None
    assert stop in prefix_digests(MIGRATION)  # the same seven statements, then others
    assert stop not in prefix_digests(OTHER)  # another field before the failing line
    assert stop == prefix_digests(FIX)[5]  # through `class MyModel`, the sixth statement
    at_setup = TRACEBACK.format(name="test_fix.py").replace("line 7", "line 4")
    assert failed_prefix("test_fix.py", FIX, at_setup) == prefix_digests(FIX)[3]


def test_no_prefix_when_the_output_does_not_settle_where_the_script_stopped() -> None:
    out = TRACEBACK.format(name="test_fix.py")
    assert failed_prefix("other.py", FIX, out) is None  # another file's traceback
    assert failed_prefix("test_fix.py", FIX, out + out) is None  # two runs, or a chain
    guarded = "try:\n" + "".join("    " + line + "\n" for line in FIX.splitlines())
    guarded += "except RuntimeError:\n    print('handled')\n"
    assert failed_prefix("test_fix.py", guarded, out.replace("line 7", "line 8")) is None
    assert failed_prefix("test_fix.py", "def broken(:\n", out) is None


def _run(*turns: tuple[str, dict, str]) -> TrajectoryRecord:
    messages = [Message("user", "task")]
    for i, (tool, args, out) in enumerate(turns):
        call = ToolCall(f"c{i}", tool, json.dumps(args))
        messages += [Message("assistant", "", [call]), Message("tool", out, tool_call_id=f"c{i}")]
    return TrajectoryRecord(
        "t", "x", "x", 0, None, "openhands", None, None, "task", None, None, messages
    )


def _create(path: str, text: str) -> tuple[str, dict, str]:
    args = {"command": "create", "path": f"/testbed/{path}", "file_text": text}
    return ("str_replace_editor", args, f"File created successfully at: /testbed/{path}")


def _python(path: str, out: str) -> tuple[str, dict, str]:
    return ("execute_bash", {"command": f"cd /testbed && python {path}"}, out)


def test_two_scripts_that_stop_at_the_same_statement_are_the_same_run() -> None:
    traj = _run(
        _create("test_fix.py", FIX),
        _create("test_migration.py", MIGRATION),
        _create("test_other.py", OTHER),
        _python("test_fix.py", TRACEBACK.format(name="test_fix.py")),
    )
    _, turns = log_turns(traj, OPENHANDS)
    assert turns[3].failed is not None
    env = facts(turns)[3]  # before the logged run: what the gate judges a candidate in
    gate = semantic_in(env)
    fix, migration, other = (
        shell_action(f"cd /testbed && python {p}", raw="", tool="execute_bash")
        for p in ("test_fix.py", "test_migration.py", "test_other.py")
    )
    assert gate(fix, migration) >= THETA
    assert gate(fix, other) < THETA
    # the same scripts without the logged traceback: told apart by their code
    _, quiet = log_turns(_run(*traj_turns_without_output()), OPENHANDS)
    assert semantic_in(facts(quiet)[3])(fix, migration) < THETA


def traj_turns_without_output() -> tuple[tuple[str, dict, str], ...]:
    return (
        _create("test_fix.py", FIX),
        _create("test_migration.py", MIGRATION),
        _create("test_other.py", OTHER),
        _python("test_fix.py", "ok"),
    )
