"""The Ray actor classes (importing this module imports Ray)."""

from __future__ import annotations

from typing import Any

import ray

from builder.llm.protocol import Usage
from builder.run.ray.coordinator import Coordinator, LimitSettings


class _Coordinator:
    """Hosts the `Coordinator` on an asyncio actor: waiters for a slot do not block others."""

    def __init__(self, settings: LimitSettings) -> None:
        self.state = Coordinator(settings)

    async def acquire(
        self, key: str, estimate: int, priority: int = 0, requests: int = 1
    ) -> tuple[int | None, str | None]:
        return await self.state.acquire(key, estimate, priority, requests)

    async def acquire_block(self, key: str, estimate: int, want: int) -> list[int]:
        return await self.state.acquire_block(key, estimate, want)

    async def release_many(self, leases: list[tuple[int, int | None]]) -> None:
        self.state.release_many(leases)

    async def settle_many(self, settled: list[tuple[Usage | None, float]]) -> None:
        self.state.settle_many(settled)

    async def add_requests(self, key: str, extra: int) -> None:
        self.state.add_requests(key, extra)

    async def release(self, lease: int, actual_tokens: int | None, unsent: bool = False) -> None:
        self.state.release(lease, actual_tokens, unsent)

    async def reserve(self, usd: float, tokens: int) -> None:
        self.state.reserve(usd, tokens)

    async def settle(self, usd: float, tokens: int, usage: Usage | None, cost_usd: float) -> None:
        self.state.settle(usd, tokens, usage, cost_usd)

    async def stats(self) -> dict[str, Any]:
        return self.state.stats()


# no CPU: it only waits; high concurrency: every waiter for a slot is one pending call
_remote: Any = ray.remote
CoordinatorActor: Any = _remote(num_cpus=0, max_concurrency=10_000)(_Coordinator)


def shard_actor_class(cpus: float, concurrency: int) -> Any:
    """`ShardWorker` as a Ray actor. A worker process that dies is restarted and the calls it
    had in flight are retried on the new one (a shard is redone whole: its tables are written
    atomically at its end); `concurrency` shards at once plus the control calls."""
    from builder.run.ray.shard_actor import ShardWorker

    return _remote(
        num_cpus=cpus,
        max_concurrency=concurrency + 2,
        max_restarts=MAX_RESTARTS,
        max_task_retries=MAX_RESTARTS,
    )(ShardWorker)


MAX_RESTARTS = 3
