"""`trajectories` table: one canonical row per logged agent run."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from schemas.common import nested, with_version

TOOL_CALL_TYPE = pa.struct(
    [
        pa.field("id", pa.string()),
        pa.field("name", pa.string()),
        pa.field("arguments", pa.string()),  # JSON text, as OpenAI sends it
    ]
)

MESSAGE_TYPE = pa.struct(
    [
        pa.field("role", pa.string()),  # system | user | assistant | tool
        pa.field("content", pa.string()),
        pa.field("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        pa.field("tool_call_id", pa.string()),
        pa.field("name", pa.string()),
        pa.field("content_parts", pa.string()),  # JSON of a structured content list, else null
        pa.field("is_demo", pa.bool_()),  # few-shot demonstration, not part of the run
        # deployed runs: the tool output before the deployed compressor; `content` holds what
        # the agent saw (README, "Online rounds"); null for every other message
        pa.field("raw_output", pa.string()),
    ]
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON object text


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message in OpenAI shape; the common currency of adapters, replay and LLM calls."""

    role: str
    content: str
    tool_calls: list[ToolCall] = nested(ToolCall, default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    content_parts: str | None = None
    is_demo: bool = False
    raw_output: str | None = None  # deployed runs: the payload before the compressor


FIDELITY_EXACT = "exact"
FIDELITY_RECONSTRUCTED = "reconstructed"

TRAJECTORY_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("source_format", pa.string(), nullable=False),
            pa.field("source_path", pa.string(), nullable=False),
            pa.field("record_index", pa.int64(), nullable=False),
            pa.field("native_id", pa.string()),
            pa.field("harness", pa.string()),
            pa.field("harness_version", pa.string()),
            pa.field("agent_model", pa.string()),
            pa.field("task", pa.string()),
            pa.field("system_prompt", pa.string()),
            pa.field("tools", pa.string()),  # JSON list of tool schemas, or null
            pa.field("messages", pa.list_(MESSAGE_TYPE)),
            pa.field("exit_status", pa.string()),
            pa.field("resolved", pa.bool_()),
            pa.field("cost_usd", pa.float64()),
            pa.field("prompt_tokens", pa.int64()),
            pa.field("completion_tokens", pa.int64()),
            pa.field("api_calls", pa.int64()),
            pa.field("fidelity", pa.string()),
            pa.field("is_sidechain", pa.bool_()),
            pa.field("metadata", pa.string()),  # free-form JSON
        ]
    ),
    "trajectories",
)


@dataclass(frozen=True, slots=True)
class TrajectoryRecord:
    trajectory_id: str
    source_format: str
    source_path: str
    record_index: int
    native_id: str | None
    harness: str
    harness_version: str | None
    agent_model: str | None
    task: str | None
    system_prompt: str | None
    tools: str | None
    messages: list[Message] = nested(Message, default_factory=list)
    exit_status: str | None = None
    resolved: bool | None = None
    cost_usd: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    api_calls: int | None = None
    fidelity: str = FIDELITY_EXACT
    is_sidechain: bool = False
    metadata: str = field(default="{}")
