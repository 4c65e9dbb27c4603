"""`log_turns` and the sandbox it gives, on a real mini-swe-agent run (../shared), checked
against what the raw JSON holds."""

from __future__ import annotations

import json
import re

from builder.ingest.formats import detect
from builder.ingest.formats.base import shell_action
from builder.ingest.formats.source import Source
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import facts
from builder.steps.log_turns import environment_before, log_turns
from tests.paths import SHARED

RUN = SHARED / "mini-swe-agent" / "django__django-16255"
FILE = RUN / "django__django-16255.traj.json"
_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_WRITE = re.compile(r"cat\s+(?:<<\s*'?EOF'?\s*>\s*|>\s*)(\S+)")


def _raw_commands() -> list[str]:
    messages = json.loads(FILE.read_text(encoding="utf-8"))["messages"]
    return [b for m in messages if m["role"] == "assistant" for b in _BLOCK.findall(m["content"])]


def test_every_acting_turn_of_the_run_is_read_with_its_output() -> None:
    source = Source(FILE)
    adapter = detect(source)
    traj = next(iter(adapter.load(source)))
    indices, turns = log_turns(traj, adapter)
    commands = _raw_commands()
    assert len(turns) == len(commands) == 17
    assert all(traj.messages[i].role == "assistant" for i in indices)
    assert all(t.observation.startswith("<returncode>") for t in turns[:-1])
    assert turns[-1].observation.startswith("diff --git")  # the submit: its patch
    written = {m[1] for c in commands if (m := _WRITE.search(c))}
    assert written == {"reproduce_issue.py", "test_typeerror.py", "test_none_items.py"}
    envs = facts(turns)
    assert set(envs[-1].scripts) == written
    first = next(i for i, c in enumerate(commands) if "reproduce_issue.py" in c)
    assert "reproduce_issue.py" not in envs[first].scripts  # written by that very turn
    assert "reproduce_issue.py" in envs[first + 1].scripts


def test_a_script_of_the_run_is_told_apart_from_the_others_by_its_code() -> None:
    source = Source(FILE)
    adapter = detect(source)
    traj = next(iter(adapter.load(source)))
    env = environment_before(traj, adapter, len(traj.messages))
    assert len(set(env.scripts.values())) == 3  # three scripts, three programs
    a = shell_action("python reproduce_issue.py", raw="python reproduce_issue.py", tool="bash")
    b = shell_action("python test_typeerror.py", raw="python test_typeerror.py", tool="bash")
    assert semantic_in(env)(a, a) == 1.0
    assert semantic_in(env)(a, b) == semantic(a, b) == 0.0
