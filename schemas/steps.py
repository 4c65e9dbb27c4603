"""`steps` table: one row per observation, with the action before it and the one after."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas.common import nested, with_version

ACTION_TYPE = pa.struct(
    [
        pa.field("tool", pa.string()),  # bash, str_replace_editor, Read, ...
        pa.field("arguments", pa.string()),  # canonical JSON object text
        pa.field("command", pa.string()),  # the shell command when the tool is a shell
        pa.field("raw", pa.string()),  # the text the action was parsed from
    ]
)


@dataclass(frozen=True, slots=True)
class Action:
    tool: str
    arguments: str
    command: str | None
    raw: str


STEP_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("action_message_index", pa.int64(), nullable=False),
            pa.field("observation_message_index", pa.int64(), nullable=False),
            pa.field("source_format", pa.string()),
            pa.field("harness", pa.string()),
            pa.field("action", ACTION_TYPE),
            pa.field("num_actions", pa.int64()),
            pa.field("thought", pa.string()),
            pa.field("observation", pa.string()),
            pa.field("next_action", ACTION_TYPE),
            pa.field("focus_question", pa.string()),
            pa.field("observation_tokens", pa.int64()),
            pa.field("observation_numbered_tokens", pa.int64()),
            pa.field("prefix_tokens", pa.int64()),
            pa.field("eligible", pa.bool_(), nullable=False),
            pa.field("ineligible_reason", pa.string()),
            # where the agent requests' tool schemas come from: recorded, harness, inferred
            # (`+inferred` when some called tools had to be inferred), null without tool calls
            pa.field("tool_schemas", pa.string()),
            # deployed runs: the payload the agent saw (its compressor's output); `observation`
            # is then the raw tool output. Null when the log records no deployed compression.
            pa.field("deployed_observation", pa.string()),
        ]
    ),
    "steps",
)


@dataclass(frozen=True, slots=True)
class StepRecord:
    trajectory_id: str
    step_index: int
    action_message_index: int
    observation_message_index: int
    source_format: str
    harness: str
    action: Action | None = nested(Action)
    num_actions: int = 1
    thought: str | None = None
    observation: str = ""
    next_action: Action | None = nested(Action, default=None)
    focus_question: str | None = None
    observation_tokens: int | None = None
    observation_numbered_tokens: int | None = None
    prefix_tokens: int | None = None
    eligible: bool = False
    ineligible_reason: str | None = None
    tool_schemas: str | None = None
    deployed_observation: str | None = None

    @property
    def deployed_changed(self) -> bool:
        """Whether a deployed compressor showed the agent something else than the raw output."""
        return (
            self.deployed_observation is not None and self.deployed_observation != self.observation
        )
