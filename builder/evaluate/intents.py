"""The action intent a step's figures are grouped by: what the command whose output is being
compressed does (read, search, run, ...), from the similarity's own feature extraction."""

from __future__ import annotations

from builder.similarity.features import action_features
from schemas.steps import Action

NONE = "none"


def action_intent(action: Action | None) -> str:
    """Intent of the action's first meaningful unit of work, or `none`."""
    if action is None:
        return NONE
    units = action_features(action)
    return units[0].intent if units else NONE


def command_text(action: Action | None) -> str | None:
    """The shell command, or `tool arguments` for other tools."""
    if action is None:
        return None
    return action.command if action.command is not None else f"{action.tool} {action.arguments}"
