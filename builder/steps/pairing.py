"""Trajectory → steps: pair each observation with the action before it and the one after, and
decide whether it is eligible for compression (and why not).

Step rule, per turn (a non-demo assistant message):
- a turn with tool calls is answered by the `tool` messages after it (up to the next assistant
  turn); user messages in between (hooks, meta and system-injected text) are context, not steps;
- a turn whose action is written as text (a fenced block, an XML call) is answered by the next
  message when it is a `user` message;
- a turn without any action gives a step only in harnesses that answer every turn with a user
  message (`adapter.text_replies`: the format-error feedback of mini-swe-agent or SWE-agent);
  in tool-call harnesses (Claude Code, OpenHands, ATIF) it is talk, and what follows is context.

Each step's action is the call its observation answers (parallel calls keep their own). The
next action is the whole next turn that has an action (all of its calls, joined as
`combine_turn` joins the agent's own replies when they are judged, so logged-reference mode
compares a turn with a turn), so a text-only turn in between does not make a step
`last_step`; `last_step` means no later turn acts. When the turn the next action comes from,
or a turn skipped on the way, was rejected by the harness as a format error
(`adapter.rejected`), the step is marked `next_action_rejected` and is not eligible unless
`EligibilityRules.allow_rejected_next_action`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from builder.ingest.formats.base import FormatAdapter, combine_turn
from builder.similarity.bashparse import parses
from builder.steps.observation import looks_binary, number_lines
from builder.steps.tokens import count_tokens
from builder.steps.tool_sets import resolve_tools
from schemas.steps import Action, StepRecord
from schemas.trajectories import Message, TrajectoryRecord

FOCUS_KEYS = ("context_focus_question", "focus_question", "cfq")


@dataclass(frozen=True)
class EligibilityRules:
    """When an observation is worth compressing (DESIGN.md: 256 tokens for training data)."""

    min_tokens: int = 256
    require_focus: bool = False
    max_observation_chars: int = 1_000_000
    allow_rejected_next_action: bool = False
    # task instances whose trajectories ingest drops (decontamination; builder.ingest.instances)
    exclude_instances: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ActingTurn:
    """A non-demo assistant turn: its actions, the messages answering it, whether the
    harness rejected it."""

    action_index: int
    actions: list[Action]
    observation_indices: list[int]
    rejected: bool


def observation_indices(
    messages: Sequence[Message], index: int, has_action: bool = True, text_replies: bool = True
) -> list[int]:
    """Indices of the observations answering the assistant message at `index` (module rule)."""
    message = messages[index]
    if message.tool_calls:
        found = []
        for j in range(index + 1, len(messages)):
            if messages[j].role == "assistant":
                break
            if messages[j].role == "tool":
                found.append(j)
        return found
    if not has_action and not text_replies:
        return []
    following = index + 1
    if following < len(messages) and messages[following].role == "user":
        return [following]
    return []


def acting_turns(traj: TrajectoryRecord, adapter: FormatAdapter) -> list[ActingTurn]:
    turns = []
    text_replies = adapter.text_replies
    for i, message in enumerate(traj.messages):
        if message.role != "assistant" or message.is_demo:
            continue
        actions = adapter.parse_action(message)
        observed = observation_indices(traj.messages, i, bool(actions), text_replies)
        turns.append(ActingTurn(i, actions, observed, adapter.rejected(message, actions)))
    return turns


def own_action(turn: ActingTurn, messages: Sequence[Message], obs_index: int) -> Action | None:
    """The action an observation answers: the call with its `tool_call_id`, else the first."""
    calls = messages[turn.action_index].tool_calls
    call_id = messages[obs_index].tool_call_id
    if call_id is not None and len(calls) == len(turn.actions):
        for call, action in zip(calls, turn.actions, strict=True):
            if call.id == call_id:
                return action
    return turn.actions[0] if turn.actions else None


def next_action(turns: Sequence[ActingTurn], position: int) -> tuple[Action | None, bool]:
    """(the next turn that acts, as one action (`combine_turn`: all of its calls), whether a
    turn up to it was rejected)."""
    rejected = False
    for later in turns[position + 1 :]:
        rejected = rejected or later.rejected
        if later.actions:
            return combine_turn(later.actions), rejected
    return None, rejected


def focus_question(action: Action | None) -> str | None:
    """The context-focus question the agent attached to its call, when the harness logs one."""
    if action is None:
        return None
    try:
        arguments = json.loads(action.arguments)
    except json.JSONDecodeError:
        return None
    if not isinstance(arguments, dict):
        return None
    for key in FOCUS_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def message_tokens(message: Message, max_chars: int = 1_000_000) -> int:
    """cl100k tokens of what a message contributes to the context (content and tool calls).

    Content over `max_chars` is estimated at 4 characters a token: BPE over one huge run of
    text is slow, and such a message is never compressed anyway.
    """
    content = message.content
    if len(content) > max_chars:
        total = len(content) // 4
    else:
        total = count_tokens(content) if content else 0
    for call in message.tool_calls:
        total += count_tokens(call.name) + count_tokens(call.arguments)
    return total


def build_steps(
    traj: TrajectoryRecord, adapter: FormatAdapter, rules: EligibilityRules
) -> Iterator[StepRecord]:
    """One StepRecord per observation of the trajectory, in message order."""
    turns = acting_turns(traj, adapter)
    if not turns:
        return
    limit = rules.max_observation_chars
    observations: dict[int, tuple[str, int | None, str | None]] = {}
    sizes = []
    observed = {i for t in turns for i in t.observation_indices}
    for index, message in enumerate(traj.messages):
        if index in observed:
            head, payload, tail = adapter.split_observation(message)
            shown = None
            if message.raw_output is not None:  # a deployed run: the raw output is the step's
                shown, payload = payload, message.raw_output
            tokens = count_tokens(payload) if len(payload) <= limit else None
            observations[index] = (payload, tokens, shown)
            envelope = count_tokens(head) + count_tokens(tail)
            sizes.append(envelope + (tokens if tokens is not None else len(payload) // 4))
        else:
            sizes.append(message_tokens(message, limit))
    prefix = [0, *accumulate(sizes)]
    tool_schemas = resolve_tools(traj).source
    step_index = 0
    for position, turn in enumerate(turns):
        following, rejected = next_action(turns, position)
        thought = traj.messages[turn.action_index].content or None
        for obs_index in turn.observation_indices:
            payload, tokens, shown = observations[obs_index]
            step = _step(
                traj,
                step_index,
                turn,
                obs_index,
                own_action(turn, traj.messages, obs_index),
                thought,
                payload,
                tokens,
                (following, rejected),
                prefix[obs_index],
                rules,
                tool_schemas,
            )
            yield step if shown is None else dataclasses.replace(step, deployed_observation=shown)
            step_index += 1


def _step(
    traj: TrajectoryRecord,
    step_index: int,
    turn: ActingTurn,
    obs_index: int,
    action: Action | None,
    thought: str | None,
    payload: str,
    raw_tokens: int | None,
    following: tuple[Action | None, bool],
    prefix_tokens: int,
    rules: EligibilityRules,
    tool_schemas: str | None = None,
) -> StepRecord:
    next_action, rejected = following
    oversized = raw_tokens is None
    numbered_tokens = None if oversized else count_tokens(number_lines(payload))
    focus = focus_question(action)
    reason = ineligible_reason(
        turn.actions, payload, next_action, numbered_tokens, focus, oversized, rules, rejected
    )
    return StepRecord(
        trajectory_id=traj.trajectory_id,
        step_index=step_index,
        action_message_index=turn.action_index,
        observation_message_index=obs_index,
        source_format=traj.source_format,
        harness=traj.harness,
        action=action,
        num_actions=len(turn.actions),
        thought=thought,
        observation=payload,
        next_action=next_action,
        focus_question=focus,
        observation_tokens=raw_tokens,
        observation_numbered_tokens=numbered_tokens,
        prefix_tokens=prefix_tokens,
        eligible=reason is None,
        ineligible_reason=reason,
        tool_schemas=tool_schemas,
    )


def ineligible_reason(
    actions: Sequence[Action],
    payload: str,
    next_action: Action | None,
    numbered_tokens: int | None,
    focus: str | None,
    oversized: bool,
    rules: EligibilityRules,
    next_rejected: bool = False,
) -> str | None:
    """Why a step cannot be compressed, or None when it can (checked in this order)."""
    if not actions:
        return "no_action"
    if len(actions) > 1:
        return "multiple_actions"
    command = actions[0].command
    if command is not None and not parses(command):
        return "unparseable_command"
    if oversized:
        return "observation_too_large"
    if looks_binary(payload):
        return "binary_observation"
    if next_action is None:
        return "last_step"
    if next_rejected and not rules.allow_rejected_next_action:
        return "next_action_rejected"
    if numbered_tokens is None or numbered_tokens < rules.min_tokens:
        return "below_threshold"
    if rules.require_focus and not focus:
        return "no_focus"
    return None
