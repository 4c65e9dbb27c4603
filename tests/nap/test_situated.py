"""The gate judges a step's actions in the sandbox its log shows (`builder.nap.situated`)."""

from __future__ import annotations

from builder.ingest.formats import get_adapter
from builder.ingest.formats.base import shell_action
from builder.nap.situated import situated_similarity
from builder.nap.types import StepJob
from builder.similarity.compare import normalized, semantic
from builder.steps.log_turns import environment_before, log_turns
from builder.steps.pairing import EligibilityRules, build_steps
from schemas.trajectories import Message, TrajectoryRecord
from tests.nap.nap_fixtures import mini_trajectory, obs

SCRIPT = "from decimal import Decimal\nprint(Decimal('1.10').normalize())\n"
LONG = "\n".join(f"Traceback line {i}: File '/testbed/x.py', in f" for i in range(120))


def _bash(command: str) -> Message:
    return Message("assistant", f"THOUGHT: go\n\n```bash\n{command}\n```")


def _obs(text: str) -> Message:
    return Message("user", obs(text))


def _traj() -> TrajectoryRecord:
    messages = [
        Message("system", "You are a helpful assistant."),
        Message("user", "Fix the issue."),
        _bash(f"cat > check.py << 'EOF'\n{SCRIPT}EOF"),
        _obs(""),
        _bash("pytest tests/test_decimal.py"),
        _obs("bash: line 1: pytest: command not found"),
        _bash(f"cat > check_2.py << 'EOF'\n# the same check\n{SCRIPT}EOF"),
        _obs(LONG),
        _bash("python check_2.py"),
        _obs("1.1"),
    ]
    return mini_trajectory(messages, "copies")


def _job() -> StepJob:
    traj = _traj()
    adapter = get_adapter("mini-swe-agent")
    steps = build_steps(traj, adapter, EligibilityRules(min_tokens=1))
    step = next(s for s in steps if s.observation_message_index == 7)
    return StepJob(traj, step, adapter)


def test_the_logs_turns_are_read_with_their_outputs() -> None:
    traj = _traj()
    indices, turns = log_turns(traj, get_adapter("mini-swe-agent"))
    assert indices == [2, 4, 6, 8]
    assert "pytest: command not found" in turns[1].observation
    assert [u.kind for t in turns for u in t.units] == ["write", "test", "write", "run"]


def test_a_candidate_running_the_copy_matches_the_logged_next_action() -> None:
    job = _job()
    assert job.step.next_action is not None
    candidate = shell_action("python check.py", raw="python check.py", tool="bash")
    assert semantic(candidate, job.step.next_action) == 0.0
    assert situated_similarity(semantic, job)(candidate, job.step.next_action) == 1.0
    other = shell_action("python other.py", raw="python other.py", tool="bash")
    assert situated_similarity(semantic, job)(other, job.step.next_action) == 0.0
    assert situated_similarity(normalized, job) is normalized


def test_the_environment_is_the_one_before_the_next_action() -> None:
    traj, adapter = _traj(), get_adapter("mini-swe-agent")
    before_copy = environment_before(traj, adapter, 6)
    assert "check.py" in before_copy.scripts and "check_2.py" not in before_copy.scripts
    assert before_copy.missing == {"python"}
    after_all = environment_before(traj, adapter, len(traj.messages))
    assert after_all.scripts["check.py"] == after_all.scripts["check_2.py"]
