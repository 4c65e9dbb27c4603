"""Step pairing and eligibility reasons, on small handcrafted trajectories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.ingest.formats import get_adapter
from builder.ingest.formats.base import trajectory_id
from builder.ingest.formats.source import Source
from builder.steps.pairing import EligibilityRules, build_steps
from schemas.steps import StepRecord
from schemas.trajectories import Message, ToolCall, TrajectoryRecord
from tests.paths import SHARED

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


# --- The step rule per harness, on the real files, against counts read from the raw JSON ---

SHARED_CLAUDE = SHARED / "claude-code/hello-world-script/transcript.jsonl"
MINI_FILES = [
    SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json",
    SHARED / "mini-swe-agent/github_issue.traj.json",
]
SWE_AGENT_FILES = sorted((SHARED / "swe-agent").glob("*.traj"))
_RAW_BASH = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n.*?\n```", re.DOTALL)


def _steps_of(path: Path, fmt: str, rules: EligibilityRules | None = None) -> list[StepRecord]:
    adapter = get_adapter(fmt)
    records = [r for r in adapter.load(Source(path)) if isinstance(r, TrajectoryRecord)]
    assert len(records) == 1
    return list(build_steps(records[0], adapter, rules or EligibilityRules()))


def _raw_claude(path: Path) -> tuple[int, dict[str, str]]:
    """(tool_result parts in main-chain user records, tool_use id -> tool name), by hand."""
    results, names = 0, {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        if record.get("isSidechain") or not isinstance(content, list):
            continue
        for part in content:
            if record["type"] == "user" and part.get("type") == "tool_result":
                results += 1
            if record["type"] == "assistant" and part.get("type") == "tool_use":
                names[part["id"]] = part["name"]
    return results, names


def test_claude_code_sample_gives_one_step_per_tool_result() -> None:
    results, names = _raw_claude(SHARED_CLAUDE)
    assert results == 2  # the Stop-hook message after the text-only turn is not a step
    steps = _steps_of(SHARED_CLAUDE, "claude-code")
    assert len(steps) == results
    assert [s.action.tool for s in steps if s.action] == list(names.values())


def test_claude_code_text_turn_and_hook_do_not_end_the_run(tmp_path: Path) -> None:
    """A tool call after the Stop hook: the step before the text-only turn is not last."""
    lines = SHARED_CLAUDE.read_text().splitlines()
    last = json.loads(lines[-1])
    call = {**last, "uuid": "later-call", "parentUuid": last["uuid"]}
    call["message"] = {
        **last["message"],
        "id": "msg_later",
        "content": [
            {"type": "tool_use", "id": "toolu_later", "name": "Bash", "input": {"command": "ls"}}
        ],
    }
    result = {**json.loads(lines[5]), "uuid": "later-result", "parentUuid": "later-call"}
    result["message"] = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_later", "content": "hello.sh"}]}  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*lines, json.dumps(call), json.dumps(result)]) + "\n")
    results, _ = _raw_claude(path)
    steps = _steps_of(path, "claude-code")
    assert len(steps) == results == 3
    assert steps[1].next_action is not None and steps[1].next_action.command == "ls"
    assert steps[1].ineligible_reason != "last_step"
    assert steps[2].ineligible_reason == "last_step"


def _raw_mini_steps(path: Path) -> list[tuple[int, bool, bool]]:
    """Per step, from the raw messages by the text rule: (bash blocks of its own turn, whether
    a later turn acts, whether the harness rejected a turn up to that next action). Each
    assistant turn is answered by the user message after it; a turn is rejected unless it
    has exactly one bash block; the next action comes from the next turn with a block."""
    doc = json.loads(path.read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    turns = [
        (i, len(_RAW_BASH.findall(m["content"])))
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
    ]
    steps = []
    for k, (i, own) in enumerate(turns):
        if i + 1 >= len(messages) or messages[i + 1]["role"] != "user":
            continue
        later = turns[k + 1 :]
        acting = next((j for j, (_, n) in enumerate(later) if n), None)
        rejected = acting is not None and any(n != 1 for _, n in later[: acting + 1])
        steps.append((own, acting is not None, rejected))
    return steps


@pytest.mark.parametrize("path", MINI_FILES, ids=lambda p: p.name)
def test_mini_swe_agent_counts_match_the_raw_file(path: Path) -> None:
    steps = _steps_of(path, "mini-swe-agent")
    raw = _raw_mini_steps(path)
    assert len(steps) == len(raw) > 0
    assert [s.num_actions for s in steps] == [own for own, _, _ in raw]
    assert [s.next_action is not None for s in steps] == [has for _, has, _ in raw]
    earlier = {"unparseable_command", "binary_observation", "observation_too_large"}
    for step, (own, _, rejected) in zip(steps, raw, strict=True):
        marked = step.ineligible_reason == "next_action_rejected"
        assert marked <= rejected
        if rejected and own == 1 and step.ineligible_reason not in earlier:
            assert marked, step
    assert [s.ineligible_reason for s in steps].count("last_step") <= 1


def _raw_swe_agent_steps(path: Path) -> int:
    """Non-demo assistant turns answered by a user or tool message, from the raw history."""
    history = json.loads(path.read_text())["history"]
    count = 0
    for i, m in enumerate(history):
        if m["role"] != "assistant" or m.get("is_demo"):
            continue
        if m.get("tool_calls"):
            for later in history[i + 1 :]:
                if later["role"] == "assistant":
                    break
                count += later["role"] == "tool"
        elif i + 1 < len(history) and history[i + 1]["role"] in ("user", "tool"):
            count += 1
    return count


@pytest.mark.parametrize("path", SWE_AGENT_FILES, ids=lambda p: p.name)
def test_swe_agent_counts_match_the_raw_file(path: Path) -> None:
    steps = _steps_of(path, "swe-agent")
    assert len(steps) == _raw_swe_agent_steps(path) > 0
    assert [s.step_index for s in steps] == list(range(len(steps)))


def test_next_action_from_a_rejected_turn_is_marked_and_not_eligible() -> None:
    messages = [
        Message("user", "task"),
        _bash("cat a"),
        _obs(LONG),
        Message("assistant", "```bash\nls\n```\n```bash\npwd\n```"),  # format error
        Message("user", "Please always provide EXACTLY ONE action in triple backticks."),
        _bash("ls"),
        _obs(LONG),
        _bash("pwd"),
    ]
    assert _reasons(messages) == ["next_action_rejected", "multiple_actions", None]
    allowed = EligibilityRules(allow_rejected_next_action=True)
    assert _reasons(messages, allowed) == [None, "multiple_actions", None]


def test_parallel_calls_keep_their_own_actions() -> None:
    calls = [
        ToolCall("a", "bash", '{"command": "ls"}'),
        ToolCall("b", "bash", '{"command": "pwd"}'),
    ]
    messages = [
        Message("user", "task"),
        Message("assistant", "", calls),
        Message("tool", LONG, tool_call_id="b"),  # results may come in any order
        Message("tool", LONG, tool_call_id="a"),
        Message("assistant", "", [ToolCall("c", "bash", '{"command": "whoami"}')]),
    ]
    traj = _traj(messages, "chat-messages")
    steps = list(build_steps(traj, get_adapter("chat-messages"), EligibilityRules()))
    assert [s.action.command for s in steps if s.action] == ["pwd", "ls"]
    assert {s.next_action.command for s in steps if s.next_action} == {"whoami"}


def test_tool_call_harness_text_turn_is_not_a_step() -> None:
    messages = [
        Message("user", "task"),
        Message("assistant", "", [ToolCall("a", "Bash", '{"command": "cat a"}')]),
        Message("tool", LONG, tool_call_id="a"),
        Message("assistant", "Done, I think."),
        Message("user", "Stop hook feedback: run the tests"),
        Message("assistant", "", [ToolCall("b", "Bash", '{"command": "pytest"}')]),
        Message("tool", "ok", tool_call_id="b"),
    ]
    traj = _traj(messages, "claude-code")
    steps = list(build_steps(traj, get_adapter("claude-code"), EligibilityRules()))
    assert [s.observation_message_index for s in steps] == [2, 6]
    assert steps[0].next_action is not None and steps[0].next_action.command == "pytest"
    assert [s.ineligible_reason for s in steps] == [None, "last_step"]


def test_mini_swe_agent_format_errors_in_a_real_run(tmp_path: Path) -> None:
    """The django run with two format errors spliced in, as mini-swe-agent logs them: a turn
    with two blocks and one with none, each answered by the format-error message."""
    doc = json.loads(MINI_FILES[0].read_text())
    error = {"role": "user", "content": "Please always provide EXACTLY ONE action in triple "
             "backticks, found 2 actions."}  # fmt: skip
    two = {"role": "assistant", "content": "THOUGHT: both\n\n```bash\nls\n```\n\n```bash\npwd\n```"}
    none = {"role": "assistant", "content": "THOUGHT: I forgot the block."}
    doc["messages"][6:6] = [two, error, none, {**error, "content": error["content"][:-10]}]
    path = tmp_path / "django.traj.json"
    path.write_text(json.dumps(doc))
    steps = _steps_of(path, "mini-swe-agent", EligibilityRules(min_tokens=0))
    raw = _raw_mini_steps(path)
    assert len(steps) == len(raw) == len(_raw_mini_steps(MINI_FILES[0])) + 2
    reasons = [s.ineligible_reason for s in steps]
    assert reasons[1:4] == ["next_action_rejected", "multiple_actions", "no_action"]
    assert (
        steps[1].next_action is not None and steps[1].next_action.command == "ls && pwd"
    )  # the whole turn
    assert [r for _, _, r in raw][1:4] == [True, True, False]


# ---------------------------------------------------------------- whole next turns (issue 26)

# a real Claude Code turn of two Bash calls, verbatim from DRMacIver/claude-reliability at
# 4e49f16a86de, snapshot-tests/tests/python-to-rust-port/transcript.jsonl (message
# msg_014ZxPEczCivfTvoKfRATh6J); its `description` arguments are left out
LINT = '{"command": "just lint 2>&1"}'
FORMAT = '{"command": "just format 2>&1"}'


def _first_step_before(turn: list[ToolCall]) -> StepRecord:
    """The step of a `cargo build` call whose next turn is `turn` (Claude Code)."""
    messages = [
        Message("user", "port it"),
        Message("assistant", "", [ToolCall("c", "Bash", '{"command": "cargo build 2>&1"}')]),
        Message("tool", LONG, tool_call_id="c"),
        Message("assistant", "", turn),
        *(Message("tool", "ok", tool_call_id=call.id) for call in turn),
    ]
    traj = _traj(messages, "claude-code")
    return next(iter(build_steps(traj, get_adapter("claude-code"), EligibilityRules())))


def test_the_logged_next_action_is_the_whole_next_turn() -> None:
    step = _first_step_before([ToolCall("d", "Bash", LINT), ToolCall("e", "Bash", FORMAT)])
    assert step.next_action is not None
    assert step.next_action.command == "just lint 2>&1 && just format 2>&1"


def test_replaying_the_identical_turn_is_the_same_action_as_the_logged_one() -> None:
    """The agent's reply is combined like the logged turn: identical turns score 1.0, and a
    reply with only the first call does not (before issue 26 the reference was the first call
    alone, so the identical turn scored 0.5 and failed while the half turn passed)."""
    from builder.llm.protocol import Completion
    from builder.nap.agent_reply import parse_reply
    from builder.similarity.compare import semantic

    adapter = get_adapter("claude-code")
    turn = [ToolCall("d", "Bash", LINT), ToolCall("e", "Bash", FORMAT)]
    logged = _first_step_before(turn).next_action
    assert logged is not None
    whole = parse_reply(
        adapter, Completion("", (ToolCall("x", "Bash", LINT), ToolCall("y", "Bash", FORMAT)))
    )
    half = parse_reply(adapter, Completion("", (ToolCall("x", "Bash", LINT),)))
    assert whole is not None and half is not None
    assert semantic(whole, logged) == 1.0
    assert semantic(half, logged) == 0.0


def test_a_turn_of_other_tools_is_one_action_of_all_its_calls() -> None:
    """A real turn of two Reads (same repository, coverage-test-fix transcript, message
    msg_017MmaKcDZ3XWAmy6PJZ86Ae): the next action lists both, and a reply reading only
    the first file is not the same action."""
    from builder.llm.protocol import Completion
    from builder.nap.agent_reply import parse_reply
    from builder.similarity.compare import semantic

    reads = (
        ToolCall("r1", "Read", '{"file_path": "/tmp/tmpw6sk2trg/src/math_utils.py"}'),
        ToolCall("r2", "Read", '{"file_path": "/tmp/tmpw6sk2trg/tests/test_math_utils.py"}'),
    )
    adapter = get_adapter("claude-code")
    logged = _first_step_before(list(reads)).next_action
    assert logged is not None and logged.tool == "tool_calls"
    assert [c["tool"] for c in json.loads(logged.arguments)["calls"]] == ["Read", "Read"]
    both = parse_reply(adapter, Completion("", reads))
    first = parse_reply(adapter, Completion("", reads[:1]))
    assert both is not None and first is not None
    assert semantic(both, logged) == 1.0
    assert semantic(first, logged) == 0.0
