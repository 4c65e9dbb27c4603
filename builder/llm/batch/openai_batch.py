"""OpenAI's Batch API: a JSONL file of chat-completion requests, `/v1/batches`, 24 h window.

Bodies are the online provider's own (`OpenAIProvider._body`), so a batch answer is the answer
the online request would get. A job carries `metadata.nap_handle`, which finds it again after a
crash between "submitted" and "recorded".
"""

from __future__ import annotations

import json
import time
from typing import Any

import openai

from builder.llm.batch.backend import Line, Outcome, Poll
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.openai_wire import completion_of, usage_of
from builder.llm.protocol import ChatRequest, ChatResponse, Usage
from builder.llm.sdk_errors import raise_mapped

ENDED = {"completed", "expired", "cancelled", "failed"}
MAX_REQUESTS = 50_000  # per batch (OpenAI's limit)
MAX_BYTES = 200 * 1024 * 1024  # input file size limit


class OpenAIBatch:
    provider = "openai"

    def __init__(
        self,
        online: OpenAIProvider,
        *,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.online = online
        self.model = online.model
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self._client: openai.AsyncOpenAI = online.sdk_client()

    def lines(self, stem: str, request: ChatRequest) -> list[Line]:
        body = self.online._body(request, request.n, request.seed)
        return [Line(stem, 0, body)]

    def response(self, request: ChatRequest, answers: list[dict[str, Any]]) -> ChatResponse:
        (answer,) = answers
        choices = answer.get("choices") or []
        if len(choices) < request.n:
            raise ValueError(f"batch answer has {len(choices)} choices for n={request.n}")
        completions = tuple(completion_of(c) for c in choices[: request.n])
        usage = usage_of(answer, self.online.capabilities)
        return ChatResponse(completions, usage or Usage(), 0.0, str(answer.get("model") or ""))

    async def submit(self, handle: str, lines: list[Line]) -> str:
        rows = [
            {"custom_id": line.custom_id, "method": "POST", "url": "/v1/chat/completions",
             "body": line.body}
            for line in lines
        ]  # fmt: skip
        payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
        try:
            file = await self._client.files.create(
                file=(f"nap-{handle}.jsonl", payload), purpose="batch"
            )
            batch = await self._client.batches.create(
                input_file_id=file.id,
                endpoint="/v1/chat/completions",
                completion_window="24h",
                metadata={"nap_handle": handle},
            )
        except Exception as exc:
            raise_mapped(exc, openai, "openai batch", self.online.api_key_env)
        return batch.id

    async def find(self, handle: str) -> str | None:
        try:
            async for batch in self._client.batches.list(limit=100):
                if (batch.metadata or {}).get("nap_handle") == handle:
                    return batch.id
                if batch.created_at < time.time() - 3 * 86400:
                    return None  # older than any job of ours that could be missing
        except Exception as exc:
            raise_mapped(exc, openai, "openai batch", self.online.api_key_env)
        return None

    async def poll(self, job_id: str) -> Poll:
        try:
            batch = await self._client.batches.retrieve(job_id)
        except Exception as exc:
            raise_mapped(exc, openai, "openai batch", self.online.api_key_env)
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        return Poll(batch.status in ENDED, batch.status, counts)

    async def results(self, job_id: str) -> dict[str, Outcome]:
        try:
            batch = await self._client.batches.retrieve(job_id)
            texts = [
                (await self._client.files.content(file_id)).text
                for file_id in (batch.output_file_id, batch.error_file_id)
                if file_id
            ]
        except Exception as exc:
            raise_mapped(exc, openai, "openai batch", self.online.api_key_env)
        outcomes: dict[str, Outcome] = {}
        for text in texts:
            for raw in text.splitlines():
                if raw.strip():
                    row = json.loads(raw)
                    outcomes[row["custom_id"]] = _outcome(row)
        return outcomes

    async def aclose(self) -> None:
        await self.online.aclose()


def _outcome(row: dict[str, Any]) -> Outcome:
    """A line's outcome; a 4xx other than 408/429 is a refusal (platform.openai.com/docs/
    guides/batch: each error line carries the status and the body the online API would give)."""
    response = row.get("response") or {}
    status = response.get("status_code")
    if status == 200 and isinstance(response.get("body"), dict):
        return Outcome(True, response["body"])
    error = row.get("error") or (response.get("body") or {}).get("error") or {}
    said = error.get("message") or error.get("code") or "failed"
    refused = isinstance(status, int) and 400 <= status < 500 and status not in (408, 429)
    reason = f"HTTP {status}: {said}" if isinstance(status, int) else str(said)
    return Outcome(False, error=reason[:500], permanent=refused)
