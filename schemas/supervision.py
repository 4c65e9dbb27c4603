"""`supervision` table: selected (prompt, target) pairs, ready for supervised fine-tuning."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from schemas.common import RAW_PREFIX, ROUND_FIELDS, nested, with_version

CHAT_MESSAGE_TYPE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str
    content: str


SUPERVISION_SCHEMA = with_version(
    pa.schema(
        [
            pa.field("trajectory_id", pa.string(), nullable=False),
            pa.field("step_index", pa.int64(), nullable=False),
            pa.field("candidate_index", pa.int64(), nullable=False),
            pa.field("rank", pa.int64(), nullable=False),  # 0 = shortest selected
            pa.field("source", pa.string()),
            pa.field("system", pa.string()),  # compressor system prompt
            pa.field("prompt", pa.string()),  # compressor user prompt
            pa.field("target", pa.string()),  # compressor output (JSON text)
            pa.field("messages", pa.list_(CHAT_MESSAGE_TYPE)),  # system, user, assistant
            pa.field("rendered", pa.string()),
            pa.field("raw_chars", pa.int64()),
            pa.field("rendered_chars", pa.int64()),
            pa.field("raw_tokens", pa.int64()),
            pa.field("rendered_tokens", pa.int64()),
            pa.field("similarity", pa.float64()),  # gate aggregate; null for fallback rows
            pa.field("length_reward", pa.float64()),
            pa.field("is_fallback", pa.bool_(), nullable=False),
            pa.field("teacher_model", pa.string()),
            pa.field("agent_model", pa.string()),
            pa.field("prompt_version", pa.string()),
            *ROUND_FIELDS,
        ]
    ),
    "supervision",
)


@dataclass(frozen=True, slots=True)
class SupervisionRecord:
    trajectory_id: str
    step_index: int
    candidate_index: int
    rank: int
    source: str
    system: str
    prompt: str
    target: str
    messages: list[ChatMessage] = nested(ChatMessage, default_factory=list)
    rendered: str = ""
    raw_chars: int = 0
    rendered_chars: int = 0
    raw_tokens: int | None = None
    rendered_tokens: int | None = None
    similarity: float | None = None
    length_reward: float | None = None
    is_fallback: bool = False
    teacher_model: str | None = None
    agent_model: str | None = None
    prompt_version: str = field(default="")
    round: int = 0
    prefix_mode: str = RAW_PREFIX
