"""A deterministic fake provider for fast unit tests, injected through `ChatProvider`.

Replies come from a queue (`enqueue`) or from a responder function of the request, so tests
can script exact model behaviour and count what was asked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage

Responder = Callable[[ChatRequest, int], str | Completion]


class FakeProvider:
    provider = "fake"

    def __init__(self, responder: Responder | None = None, *, model: str = "fake-model") -> None:
        self.model = model
        self.base_url: str | None = None
        self._responder = responder
        self._queue: deque[str | Completion] = deque()
        self.requests: list[ChatRequest] = []

    def enqueue(self, *replies: str | Completion) -> None:
        self._queue.extend(replies)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        completions = []
        for index in range(request.n):
            if self._queue:
                reply = self._queue.popleft()
            elif self._responder is not None:
                reply = self._responder(request, index)
            else:
                raise AssertionError("FakeProvider: no queued reply and no responder")
            completions.append(
                reply if isinstance(reply, Completion) else Completion(reply, (), "stop")
            )
        prompt = sum(len(m.content) // 4 for m in request.messages)
        completion = sum(len(c.text) // 4 for c in completions)
        return ChatResponse(tuple(completions), Usage(prompt, completion, 0), 0.0, self.model)
