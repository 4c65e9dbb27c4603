"""What a provider's batch API must offer the batch queue, and the shapes they exchange."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from builder.llm.protocol import ChatRequest, ChatResponse

BATCH_DISCOUNT = 0.5  # both providers bill batch requests at half the list price


@dataclass(frozen=True)
class Line:
    """One request line of a job: `sample` is the sample index it answers (Anthropic sends one
    line per sample; OpenAI one line for all `n`)."""

    custom_id: str
    sample: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Poll:
    ended: bool
    status: str  # the provider's own word (validating, in_progress, ended, expired, ...)
    progress: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    body: dict[str, Any] | None = None  # the answer, as the online API would give it
    error: str | None = None
    permanent: bool = False  # refused (a 4xx other than 408/429): never submitted again


class BatchBackend(Protocol):
    provider: str
    model: str
    max_requests: int
    max_bytes: int

    def lines(self, stem: str, request: ChatRequest) -> list[Line]: ...

    def response(self, request: ChatRequest, answers: list[dict[str, Any]]) -> ChatResponse: ...

    async def submit(self, handle: str, lines: list[Line]) -> str: ...

    async def find(self, handle: str) -> str | None: ...

    async def poll(self, job_id: str) -> Poll: ...

    async def results(self, job_id: str) -> dict[str, Outcome]: ...

    async def aclose(self) -> None: ...
