"""The chat-completion protocol that every stage uses and every provider implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from schemas.trajectories import Message, ToolCall


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines an answer. The cache key is derived from all of it.

    `cache_prefix` is the number of leading messages shared by a family of requests (for
    example the K agent requests of one step); providers with explicit prompt caching place
    their breakpoint there. It does not change the answer, so it is not part of the cache key.
    """

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] | None = None
    n: int = 1
    temperature: float = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    json_schema: dict[str, Any] | None = None
    cache_prefix: int | None = None


@dataclass(frozen=True)
class Completion:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens of one request. `prompt_tokens` includes the cached reads and the cache writes;
    writes are billed above the input rate (Anthropic: 1.25x for the 5-minute cache, 2x for
    the 1-hour one), so they are counted apart."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0  # 5-minute cache writes
    cache_write_1h_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_prompt_tokens + other.cached_prompt_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )


@dataclass(frozen=True)
class ChatResponse:
    completions: tuple[Completion, ...]
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False  # served from the request cache, no request sent
    cost_usd: float = 0.0


@runtime_checkable
class ChatProvider(Protocol):
    """One model endpoint. `complete` must return exactly `request.n` completions or raise.

    Providers raise `TransientLLMError` for what may succeed on retry and `PermanentLLMError`
    for what will not; the client does the retrying.
    """

    provider: str  # "openai", "anthropic", "local", "fake", ...
    model: str
    base_url: str | None

    async def complete(self, request: ChatRequest) -> ChatResponse: ...
