"""Step pairing and eligibility reasons, on small handcrafted trajectories."""

from __future__ import annotations

import json

from builder.formats import get_adapter
from builder.formats.base import trajectory_id
from builder.steps import EligibilityRules, build_steps
from schemas.trajectories import Message, ToolCall, TrajectoryRecord

LONG = "\n".join(f"line {i}: some output text that goes on" for i in range(80))


def _traj(messages: list[Message], fmt: str = "mini-swe-agent") -> TrajectoryRecord:
    return TrajectoryRecord(
        trajectory_id=trajectory_id(fmt, "t", messages),
        source_format=fmt,
        source_path="x",
        record_index=0,
        native_id="t",
        harness=fmt,
        harness_version=None,
        agent_model=None,
        task="task",
        system_prompt=None,
        tools=None,
        messages=messages,
    )


def _bash(command: str) -> Message:
    return Message("assistant", f"THOUGHT: go\n\n```bash\n{command}\n```")


def _obs(text: str) -> Message:
    return Message("user", f"<returncode>0</returncode>\n<output>\n{text}\n</output>")


def _reasons(
    messages: list[Message], rules: EligibilityRules | None = None, fmt: str = "mini-swe-agent"
) -> list[str | None]:
    traj = _traj(messages, fmt)
    return [
        s.ineligible_reason
        for s in build_steps(traj, get_adapter(fmt), rules or EligibilityRules())
    ]


def test_each_ineligibility_reason_is_reported() -> None:
    messages = [
        Message("system", "s"),
        Message("user", "task"),
        Message("assistant", "no code block here"),
        Message("user", "Please provide one block"),
        Message("assistant", "```bash\nls\n```\nand\n```bash\npwd\n```"),
        _obs(LONG),
        _bash("cat 'unterminated"),
        _obs(LONG),
        _bash("ls -la"),
        _obs("short"),
        _bash("cat big.txt"),
        _obs(LONG),
        _bash("nl -ba f.py"),
        _obs(LONG),
    ]
    assert _reasons(messages) == [
        "no_action",
        "multiple_actions",
        "unparseable_command",
        "below_threshold",
        None,
        "last_step",
    ]


def test_the_threshold_counts_line_numbered_tokens() -> None:
    messages = [Message("user", "task"), _bash("cat a"), _obs(LONG), _bash("ls")]
    [step] = build_steps(_traj(messages), get_adapter("mini-swe-agent"), EligibilityRules())
    assert step.observation == LONG + "\n"  # the payload is everything inside <output>\n
    assert step.observation_numbered_tokens > step.observation_tokens >= 256
    high = EligibilityRules(min_tokens=step.observation_numbered_tokens + 1)
    assert _reasons(messages, high) == ["below_threshold"]
    exact = EligibilityRules(min_tokens=step.observation_numbered_tokens)
    assert _reasons(messages, exact) == [None]
    assert step.prefix_tokens > 0 and step.next_action is not None
    assert step.next_action.command == "ls"


def test_focus_question_comes_from_the_tool_call_and_can_be_required() -> None:
    args = {"command": "cat a.py", "context_focus_question": "Where is foo defined?"}
    messages = [
        Message("system", "s"),
        Message("user", "task"),
        Message("assistant", "", [ToolCall("c1", "bash", json.dumps(args))]),
        Message("tool", LONG, tool_call_id="c1"),
        Message("assistant", "", [ToolCall("c2", "bash", json.dumps({"command": "ls"}))]),
        Message("tool", LONG, tool_call_id="c2"),
        Message("assistant", "", [ToolCall("c3", "bash", json.dumps({"command": "pwd"}))]),
    ]
    traj = _traj(messages, "chat-messages")
    steps = list(
        build_steps(traj, get_adapter("chat-messages"), EligibilityRules(require_focus=True))
    )
    assert [s.focus_question for s in steps] == ["Where is foo defined?", None]
    assert [s.ineligible_reason for s in steps] == [None, "no_focus"]
    assert steps[0].action.command == "cat a.py"


def test_parallel_tool_calls_give_one_step_per_observation_all_ineligible() -> None:
    calls = [
        ToolCall("a", "bash", '{"command": "ls"}'),
        ToolCall("b", "bash", '{"command": "pwd"}'),
    ]
    messages = [
        Message("user", "task"),
        Message("assistant", "", calls),
        Message("tool", LONG, tool_call_id="a"),
        Message("tool", LONG, tool_call_id="b"),
        Message("assistant", "", [ToolCall("c", "bash", '{"command": "ls"}')]),
    ]
    traj = _traj(messages, "chat-messages")
    steps = list(build_steps(traj, get_adapter("chat-messages"), EligibilityRules()))
    assert [
        (s.step_index, s.observation_message_index, s.num_actions, s.ineligible_reason)
        for s in steps
    ] == [(0, 2, 2, "multiple_actions"), (1, 3, 2, "multiple_actions")]


def test_binary_observations_are_not_eligible() -> None:
    binary = "\x00\x01\x02ELF\x7f" * 400
    messages = [Message("user", "task"), _bash("cat /bin/ls"), _obs(binary), _bash("ls")]
    assert _reasons(messages, EligibilityRules(min_tokens=0)) == ["binary_observation"]
