"""The managed llama.cpp server as a provider that notices when the server dies.

Why: a native crash (a CPU path the build should not have, an out-of-memory kill) used to
leave the run retrying a dead port until every retry was spent, with no word of the cause.
Here a failed request first asks the process whether it is still alive. A dead server is
reported with its exit signal and the end of its log, restarted once, and the request is sent
again; a second death stops the run with `LocalServerDiedError`, which says what happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from builder.errors import PermanentLLMError, TransientLLMError
from builder.llm.local.server import ManagedLlamaServer
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest, ChatResponse

log = logging.getLogger(__name__)

REAP_WAIT_S = 2.0  # a crashing process may drop its sockets a moment before it is reaped


class LocalServerDiedError(PermanentLLMError):
    """The managed server died again after its one restart."""

    kind = "local_server_died"


class SupervisedServerProvider:
    """An `OpenAIProvider` on a `ManagedLlamaServer`, restarted once if the server dies."""

    provider = "openai"

    def __init__(
        self,
        server: ManagedLlamaServer,
        connect: Callable[[str], OpenAIProvider],
        *,
        max_restarts: int = 1,
    ) -> None:
        self.server = server
        self.model = server.model
        self._connect = connect
        self._inner = connect(server.base_url)
        self.base_url: str | None = self._inner.base_url
        self._max_restarts = max_restarts
        self.restarts = 0
        self.deaths: list[str] = []
        self._generation = 0
        self._lock = asyncio.Lock()

    async def aclose(self) -> None:
        """Close the connections to the current server (an unclosed aiohttp session warns)."""
        await self._inner.aclose()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        generation = self._generation
        try:
            return await self._inner.complete(request)
        except TransientLLMError:
            if not await self._recovered(generation):
                raise
        return await self._inner.complete(request)

    async def _recovered(self, generation: int) -> bool:
        """True when the server had died and a fresh one now runs; raises after the last one."""
        async with self._lock:
            if generation != self._generation:
                return True  # another request already restarted it
            code = await asyncio.to_thread(self.server.exited, REAP_WAIT_S)
            if code is None:
                return False  # alive: an ordinary transient error, the client retries it
            report = self.server.death_report(code)
            self.deaths.append(report)
            if self.restarts >= self._max_restarts:
                raise LocalServerDiedError(
                    f"{report}\nIt had already been restarted {self.restarts} time(s); the run "
                    "stops here (finished shards are kept; rerun the same command to resume). "
                    "A crash at the first request usually means llama-cpp-python was built for "
                    "another CPU: rebuild it with `make setup` (portable by default)."
                )
            log.error("%s\nrestarting it once", report)
            await asyncio.to_thread(self.server.restart)
            await self._inner.aclose()  # its server is gone; only its sockets are left
            self._inner = self._connect(self.server.base_url)
            self.base_url = self._inner.base_url
            self.restarts += 1
            self._generation += 1
            return True
