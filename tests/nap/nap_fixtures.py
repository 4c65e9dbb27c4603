"""A small mini-swe-agent trajectory and a scripted fake model for exact-row NAP tests."""

from __future__ import annotations

from builder.ingest.formats import get_adapter
from builder.ingest.formats.base import trajectory_id
from builder.llm.fake import FakeProvider
from builder.llm.protocol import ChatRequest
from builder.nap.step import StepJob
from builder.steps.pairing import EligibilityRules, build_steps
from schemas.trajectories import Message, TrajectoryRecord

PASSING = [f"tests/test_mod.py::test_case_{i} PASSED" for i in range(1, 19)]
FAILURE = [
    "tests/test_mod.py::test_empty FAILED",
    "ZeroDivisionError: division by zero",
    "  File textstats/stats.py, line 31, in average_word_length",
]
LOG = "\n".join(PASSING + FAILURE)
LOGGED_NEXT = "sed -n 25,35p textstats/stats.py"


def obs(text: str, code: int = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{text}\n</output>"


def small_trajectory() -> TrajectoryRecord:
    messages = [
        Message("system", "You are an agent. Reply with THOUGHT and one ```bash block."),
        Message("user", "<pr_description>\nsummarize('') crashes\n</pr_description>"),
        Message("assistant", "THOUGHT: run the tests\n\n```bash\npython -m pytest -q\n```"),
        Message("user", obs(LOG, 1)),
        Message("assistant", f"THOUGHT: read the code\n\n```bash\n{LOGGED_NEXT}\n```"),
        Message("user", obs("\n".join(f"line {i}" for i in range(25, 36)))),
        Message(
            "assistant", "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"
        ),
    ]
    return mini_trajectory(messages, "small", task="summarize('') crashes")


def mini_trajectory(messages: list[Message], name: str, task: str = "task") -> TrajectoryRecord:
    """A mini-swe-agent trajectory of these messages (the first is the system prompt)."""
    return TrajectoryRecord(
        trajectory_id=trajectory_id("mini-swe-agent", name, messages),
        source_format="mini-swe-agent",
        source_path=f"{name}.traj.json",
        record_index=0,
        native_id=name,
        harness="mini-swe-agent",
        harness_version="1.0",
        agent_model="m",
        task=task,
        system_prompt=messages[0].content,
        tools=None,
        messages=messages,
    )


def first_job() -> StepJob:
    traj = small_trajectory()
    adapter = get_adapter("mini-swe-agent")
    steps = list(build_steps(traj, adapter, EligibilityRules(min_tokens=10)))
    assert steps[0].eligible, steps[0].ineligible_reason
    return StepJob(traj, steps[0], adapter)


TEACHER_REPLIES = [
    '{"type": "unchanged"}',
    '{"type": "plain", "content": "all tests ran"}',
    '{"type": "code", "content": ["1-18: 18 passing tests"]}',
    "this is not json",
    '{"type": "code", "content": ["1-18: 18 passing tests"]}',
]


def scripted(teacher_replies: list[str] = TEACHER_REPLIES) -> FakeProvider:
    """Teacher requests (they carry a JSON schema) get `teacher_replies`; agent requests read
    the observation: with the traceback visible the agent opens the code, else it lists files."""

    def respond(request: ChatRequest, index: int) -> str:
        if request.json_schema is not None:
            return teacher_replies[index]
        observation = request.messages[-1].content
        if "ZeroDivisionError" in observation:
            return f"THOUGHT: look\n\n```bash\n{LOGGED_NEXT}\n```"
        return "THOUGHT: look around\n\n```bash\nls -la\n```"

    return FakeProvider(respond)
