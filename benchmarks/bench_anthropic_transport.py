"""CPU per request of the Anthropic SDK on httpx vs on aiohttp (`DefaultAioHttpClient`),
against a local Messages stand-in, at a given number of requests in flight.

    PYTHONPATH=$PWD python benchmarks/bench_anthropic_transport.py --requests 800 --concurrency 64

Both transports send the same bodies through `AnthropicProvider` (no gate); the figure is the
client thread's CPU time (user + system) divided by the requests, alternating the transports
per repeat so that machine load hits both alike. Measure on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from builder.llm.anthropic_provider import AnthropicProvider
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message
from tests.llm.servers import FakeAPIServer


def _cpu() -> float:
    """CPU of this thread only: the client's event loop runs here, the stand-in server in
    threads of its own, so the server's work is not counted (it was, with RUSAGE_SELF)."""
    return time.thread_time()


async def _drive(provider: AnthropicProvider, requests: int, concurrency: int) -> None:
    slots = asyncio.Semaphore(concurrency)
    request = ChatRequest((Message("user", "x" * 2000),), max_tokens=16)

    async def one() -> None:
        async with slots:
            await provider.complete(request)

    try:
        await asyncio.gather(*(one() for _ in range(requests)))
    finally:
        await provider.aclose()


def measure(base_url: str, transport: str, requests: int, concurrency: int) -> dict[str, float]:
    provider = AnthropicProvider("claude-bench", base_url=base_url, transport=transport)
    cpu, wall = _cpu(), time.perf_counter()
    asyncio.run(_drive(provider, requests, concurrency))
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    return {"cpu_ms_per_request": 1000 * cpu / requests, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench")
    results: dict[str, list[dict[str, float]]] = {"httpx": [], "aiohttp": []}
    # the stand-in runs in this process's threads: its CPU is counted for both transports alike
    with FakeAPIServer(api="anthropic") as server:
        for _ in range(args.repeats):
            for transport in ("httpx", "aiohttp"):
                figures = measure(server.base_url, transport, args.requests, args.concurrency)
                results[transport].append(figures)
    print(json.dumps({"requests": args.requests, "concurrency": args.concurrency,
                      "results": results}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
