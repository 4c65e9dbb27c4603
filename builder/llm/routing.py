"""Several endpoints behind one role (`base_url: [url1, url2, ...]`, e.g. vLLM replicas).

`RoutedProvider` is a `ChatProvider` over inner providers of the same model. Each request goes
to the endpoint that ranks first for its step among those in rotation (rendezvous hashing of
the step key): all requests of a step share their context prefix, so they stick to one
replica and its prefix cache keeps hitting, while steps spread evenly. An endpoint that fails
with a transient error (connection, timeout, 5xx, 429) leaves rotation for `cooldown_s`; the
client's retry then lands on the next endpoint of the step's ranking, and steps of the failed
endpoint return to it once the cooldown is over. When every endpoint is out, the step's first
choice is tried anyway (the client's backoff paces it).

Answers do not depend on the replica: the cache identity (`base_url`) is the first URL, so
adding or removing replicas keeps cached answers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence

from builder.errors import TransientLLMError
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse

log = logging.getLogger(__name__)

COOLDOWN_S = 30.0


def step_key(request: ChatRequest) -> str:
    """What the requests of one step share: the messages up to `cache_prefix` (all of them
    when the request sets none, as the one teacher request of a step)."""
    shared = request.messages[: request.cache_prefix or len(request.messages)]
    text = json.dumps([[m.role, m.content] for m in shared], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def ranking(key: str, urls: Sequence[str]) -> list[int]:
    """Endpoint indices by rendezvous score for `key`: removing an endpoint moves only the
    steps that ranked it first."""

    def score(index: int) -> bytes:
        return hashlib.sha256(f"{key}|{urls[index]}".encode()).digest()

    return sorted(range(len(urls)), key=score, reverse=True)


class RoutedProvider:
    """One role's endpoints as one provider (see the module docstring)."""

    def __init__(
        self,
        inner: Sequence[ChatProvider],
        *,
        cooldown_s: float = COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not inner:
            raise ValueError("RoutedProvider needs at least one endpoint")
        self.inner = list(inner)
        self.provider = self.inner[0].provider
        self.model = self.inner[0].model
        self.base_url = self.inner[0].base_url
        self.urls = [p.base_url or f"#{i}" for i, p in enumerate(self.inner)]
        self.cooldown_s = cooldown_s
        self._clock = clock
        self.down_until = [0.0] * len(self.inner)
        self.sent = [0] * len(self.inner)

    def choose(self, request: ChatRequest) -> int:
        """The step's first-ranked endpoint still in rotation (its first choice if none is)."""
        order = ranking(step_key(request), self.urls)
        now = self._clock()
        return next((i for i in order if self.down_until[i] <= now), order[0])

    async def complete(self, request: ChatRequest) -> ChatResponse:
        index = self.choose(request)
        self.sent[index] += 1
        try:
            return await self.inner[index].complete(request)
        except TransientLLMError as exc:
            if self.down_until[index] <= self._clock():
                log.warning(
                    "endpoint %s out of rotation for %.0fs: %s",
                    self.urls[index],
                    self.cooldown_s,
                    exc.kind,
                )
            self.down_until[index] = self._clock() + self.cooldown_s
            raise

    async def aclose(self) -> None:
        for provider in self.inner:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()
