"""From an agent reply to the one action NAP compares (DESIGN.md "Candidate action")."""

from __future__ import annotations

import dataclasses
import json

from builder.ingest.formats.base import TURN_TOOL, FormatAdapter, canonical_json, combine_turn
from builder.llm.protocol import Completion
from builder.steps.pairing import FOCUS_KEYS
from schemas.steps import Action
from schemas.trajectories import Message


def reply_message(completion: Completion) -> Message:
    """A completion as the assistant message the harness would have logged."""
    return Message("assistant", completion.text, list(completion.tool_calls))


def combine(actions: list[Action]) -> Action | None:
    """The whole turn as one action (`combine_turn`): the same shape as the logged next
    turn it is compared with in logged-reference mode."""
    return combine_turn(actions)


def without_focus(action: Action) -> Action:
    """The action (every call of a turn) with its context-focus-question argument removed
    (NAP ignores it)."""
    try:
        arguments = json.loads(action.arguments)
    except json.JSONDecodeError:
        return action
    if not isinstance(arguments, dict):
        return action
    if action.tool == TURN_TOOL and isinstance(arguments.get("calls"), list):
        calls = [_call_without_focus(c) for c in arguments["calls"]]
        if calls == arguments["calls"]:
            return action
        return dataclasses.replace(action, arguments=canonical_json({**arguments, "calls": calls}))
    if not any(k in arguments for k in FOCUS_KEYS):
        return action
    kept = {k: v for k, v in arguments.items() if k not in FOCUS_KEYS}
    return dataclasses.replace(action, arguments=canonical_json(kept))


def _call_without_focus(call: object) -> object:
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
        return call
    kept = {k: v for k, v in call["arguments"].items() if k not in FOCUS_KEYS}
    return {**call, "arguments": kept}


def parse_reply(adapter: FormatAdapter, completion: Completion) -> Action | None:
    """The reply's action in the harness grammar, or None for a format error."""
    action = combine(adapter.parse_action(reply_message(completion)))
    return without_focus(action) if action is not None else None
