"""From an agent reply to the one action NAP compares (DESIGN.md "Candidate action")."""

from __future__ import annotations

import dataclasses
import json

from builder.ingest.formats.base import FormatAdapter, canonical_json, shell_action
from builder.llm.protocol import Completion
from builder.steps.pairing import FOCUS_KEYS
from schemas.steps import Action
from schemas.trajectories import Message


def reply_message(completion: Completion) -> Message:
    """A completion as the assistant message the harness would have logged."""
    return Message("assistant", completion.text, list(completion.tool_calls))


def combine(actions: list[Action]) -> Action | None:
    """Several shell calls become one command joined with ` && `; otherwise the first action."""
    if not actions:
        return None
    if len(actions) > 1 and all(a.command is not None for a in actions):
        command = " && ".join(a.command or "" for a in actions)
        return shell_action(command, "\n".join(a.raw for a in actions), tool=actions[0].tool)
    return actions[0]


def without_focus(action: Action) -> Action:
    """The action with its context-focus-question argument removed (NAP ignores it)."""
    try:
        arguments = json.loads(action.arguments)
    except json.JSONDecodeError:
        return action
    if not isinstance(arguments, dict) or not any(k in arguments for k in FOCUS_KEYS):
        return action
    kept = {k: v for k, v in arguments.items() if k not in FOCUS_KEYS}
    return dataclasses.replace(action, arguments=canonical_json(kept))


def parse_reply(adapter: FormatAdapter, completion: Completion) -> Action | None:
    """The reply's action in the harness grammar, or None for a format error."""
    action = combine(adapter.parse_action(reply_message(completion)))
    return without_focus(action) if action is not None else None
