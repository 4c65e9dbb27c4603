"""Anthropic's Message Batches (`/v1/messages/batches`).

The Messages API has no `n`, so each sample is its own line (`<stem>_<i>`). Bodies are the
online provider's (`build_request`), `cache_control` breakpoints included: the provider
honours them inside a batch on a best-effort basis. Anthropic batches carry no metadata, so a
job whose id was lost in a crash right after submission cannot be found again: that window is
the one request that creates the job, and it is documented in the README.
"""

from __future__ import annotations

from typing import Any

import anthropic

from builder.llm.anthropic_provider import AnthropicProvider, build_request, to_completion, to_usage
from builder.llm.batch.backend import Line, Outcome, Poll
from builder.llm.protocol import ChatRequest, ChatResponse, Usage
from builder.llm.sdk_errors import raise_mapped

MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024


class AnthropicBatch:
    provider = "anthropic"

    def __init__(
        self,
        online: AnthropicProvider,
        *,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.online = online
        self.model = online.model
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self._client: anthropic.AsyncAnthropic = online._client

    def lines(self, stem: str, request: ChatRequest) -> list[Line]:
        body = build_request(self.model, request)
        return [Line(f"{stem}_{i}", i, body) for i in range(request.n)]

    def response(self, request: ChatRequest, answers: list[dict[str, Any]]) -> ChatResponse:
        structured = request.json_schema is not None
        completions = tuple(to_completion(a, structured=structured) for a in answers)
        usage = sum((to_usage(a.get("usage") or {}) for a in answers), Usage())
        return ChatResponse(completions, usage, 0.0, str(answers[0].get("model") or ""))

    async def submit(self, handle: str, lines: list[Line]) -> str:
        requests: Any = [{"custom_id": line.custom_id, "params": line.body} for line in lines]
        try:
            batch = await self._client.messages.batches.create(requests=requests)
        except Exception as exc:
            raise_mapped(exc, anthropic, "anthropic batch", self.online.api_key_env)
        return batch.id

    async def find(self, handle: str) -> str | None:
        return None  # no metadata to find a job by (see the module docstring)

    async def poll(self, job_id: str) -> Poll:
        try:
            batch = await self._client.messages.batches.retrieve(job_id)
        except Exception as exc:
            raise_mapped(exc, anthropic, "anthropic batch", self.online.api_key_env)
        counts = batch.request_counts.model_dump()
        return Poll(batch.processing_status == "ended", batch.processing_status, counts)

    async def results(self, job_id: str) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        try:
            async for entry in await self._client.messages.batches.results(job_id):
                result = entry.result.model_dump()
                if result.get("type") == "succeeded":
                    outcomes[entry.custom_id] = Outcome(True, result["message"])
                else:
                    outcomes[entry.custom_id] = _outcome(result)
        except Exception as exc:
            raise_mapped(exc, anthropic, "anthropic batch", self.online.api_key_env)
        return outcomes

    async def aclose(self) -> None:
        await self.online.aclose()


def _outcome(result: dict[str, Any]) -> Outcome:
    """A line that did not succeed: `errored` with an `invalid_request_error` is a refusal,
    never sent again; api errors, `expired` and `canceled` may go again (docs.anthropic.com/
    en/docs/build-with-claude/batch-processing, the result types)."""
    error = (result.get("error") or {}).get("error") or {}
    kind = error.get("type")
    if result.get("type") == "errored" and kind:
        refused = kind == "invalid_request_error"
        return Outcome(False, error=f"{kind}: {error.get('message')}"[:500], permanent=refused)
    return Outcome(False, error=str(result.get("type")))
