"""LLM client benchmark: orchestration ceiling, client overhead, cache lookup, concurrency.

Run: `python benchmarks/bench_llm.py` (about 20 s on 2 cores). Prints a table and writes
`.bench/llm.json`. Everything runs against local servers on 127.0.0.1:
- a zero-latency OpenAI-compatible server: requests/s straight through the provider and
  through `LLMClient` (cache on: misses, then hits), and the latency the client adds per request
  (time in `LLMClient.complete` minus time in the provider, sequential calls);
- `RequestCache.get` on a cache of 10,000 entries (key hashing included);
- 0.2 s- and 0.5 s-latency servers with `max_in_flight=64`: requests in flight, averaged over
  time on the server side (and inside the provider, client side), versus the limit, with the
  process CPU per request: when CPU per request x limit / latency exceeds the CPU this process
  gets, the machine, not the limiter, caps concurrency.
Targets: client overhead < 2 ms per request, >= 95% of the configured concurrency in flight.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from builder.llm.cache import RequestCache, key_for  # noqa: E402
from builder.llm.client import LLMClient  # noqa: E402
from builder.llm.fake import FakeProvider  # noqa: E402
from builder.llm.limits import EndpointLimits  # noqa: E402
from builder.llm.openai_provider import DEFAULT_TRANSPORT, TRANSPORTS, OpenAIProvider  # noqa: E402
from builder.llm.protocol import ChatRequest, ChatResponse  # noqa: E402
from schemas.trajectories import Message  # noqa: E402

N_REQUESTS = 400
THROUGHPUT_CONCURRENCY = 16
CONCURRENCY_LIMIT = 64
LATENCIES_S = (0.2, 0.5)  # the target is at 0.2 s; 0.5 s shows the CPU-bound ceiling
NO_KEY_ENV = "NAP_BENCH_NO_KEY"  # never send a real key to the local server


@contextmanager
def server_process(latency_s: float) -> Iterator[str]:
    """A local OpenAI-shaped server in its own process (it must not share the client's GIL)."""
    command = [sys.executable, "-m", "tests.llm.servers", str(latency_s)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{int(process.stdout.readline())}"
    finally:
        process.terminate()
        process.wait(10)


def requests(count: int, tag: str) -> list[ChatRequest]:
    system = Message("system", "You are a coding agent. " * 40)
    return [
        ChatRequest((system, Message("user", f"{tag} step {i}: run the tests")), n=1, seed=i)
        for i in range(count)
    ]


class Timed:
    """Wraps a provider and records when each `complete` ran inside it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.provider, self.model, self.base_url = inner.provider, inner.model, inner.base_url
        self.intervals: list[tuple[float, float]] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            return await self.inner.complete(request)
        finally:
            self.intervals.append((started, time.perf_counter()))


def mean_overlap(intervals: list[tuple[float, float]]) -> float:
    """Time-averaged number of open intervals between the first start and the last end."""
    start, end = min(a for a, _ in intervals), max(b for _, b in intervals)
    return sum(b - a for a, b in intervals) / (end - start)


async def throughput(call: Any, batch: list[ChatRequest], concurrency: int) -> float:
    """Requests per second for `call(request)` with `concurrency` callers."""
    queue = list(reversed(batch))

    async def worker() -> None:
        while queue:
            await call(queue.pop())

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(batch) / (time.perf_counter() - started)


async def zero_latency(base_url: str, cache_path: Path) -> dict[str, float]:
    provider = OpenAIProvider("bench", base_url=base_url, api_key_env=NO_KEY_ENV)
    limits = EndpointLimits(max_in_flight=THROUGHPUT_CONCURRENCY)
    client = LLMClient(provider, cache=RequestCache(cache_path), limits=limits)
    for request in requests(50, "warm"):  # connections, lazy imports
        await provider.complete(request)
    raw = await throughput(provider.complete, requests(N_REQUESTS, "raw"), THROUGHPUT_CONCURRENCY)

    async def through(request: ChatRequest) -> ChatResponse:
        return await client.complete(request, stage="bench")

    batch = requests(N_REQUESTS, "client")
    miss = await throughput(through, batch, THROUGHPUT_CONCURRENCY)
    hit = await throughput(through, batch, THROUGHPUT_CONCURRENCY)

    timed = Timed(provider)
    sequential = LLMClient(timed, cache=RequestCache(cache_path), limits=limits)
    overheads = []
    for request in requests(N_REQUESTS, "sequential"):
        started = time.perf_counter()
        await sequential.complete(request, stage="bench")
        inner_start, inner_end = timed.intervals[-1]
        overheads.append(time.perf_counter() - started - (inner_end - inner_start))
    await provider.aclose()
    return {
        "provider_rps": raw,
        "client_miss_rps": miss,
        "client_hit_rps": hit,
        "overhead_ms_median": 1000 * statistics.median(overheads),
        "overhead_ms_p95": 1000 * sorted(overheads)[int(0.95 * len(overheads))],
        "overhead_ms_mean": 1000 * statistics.fmean(overheads),
    }


async def fake_ceiling(cache_path: Path) -> float:
    """Requests/s through LLMClient + cache with an in-process provider: no HTTP at all."""
    client = LLMClient(FakeProvider(lambda r, i: "ok"), cache=RequestCache(cache_path))

    async def through(request: ChatRequest) -> ChatResponse:
        return await client.complete(request, stage="bench")

    return await throughput(through, requests(2000, "fake"), THROUGHPUT_CONCURRENCY)


class Sleeper:
    """A provider that only waits: what the limiter alone achieves, with no HTTP stack."""

    provider, model, base_url = "sleeper", "sleeper", None

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.fake = FakeProvider(lambda r, i: "ok")

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.latency_s)
        return await self.fake.complete(request)


async def limiter_alone(latency_s: float) -> float:
    """Time-averaged requests inside the provider / the limit, without HTTP."""
    provider = Timed(Sleeper(latency_s))
    client = LLMClient(provider, limits=EndpointLimits(max_in_flight=CONCURRENCY_LIMIT))
    batch = requests(CONCURRENCY_LIMIT * 6, "sleeper")
    await asyncio.gather(*(client.complete(r, stage="bench") for r in batch))
    return mean_overlap(provider.intervals) / CONCURRENCY_LIMIT


def cache_lookup(cache_path: Path) -> dict[str, float]:
    cache = RequestCache(cache_path)
    provider = FakeProvider()
    stored = asyncio.run(FakeProvider(lambda r, i: "x" * 400).complete(requests(1, "v")[0]))
    batch = requests(10_000, "lookup")
    keys = [key_for(provider, r) for r in batch]
    for key in keys:
        cache.put(key, stored)
    started = time.perf_counter()
    hashed = [key_for(provider, r) for r in batch]
    key_us = 1e6 * (time.perf_counter() - started) / len(batch)
    started = time.perf_counter()
    found = sum(cache.get(k) is not None for k in hashed)
    get_us = 1e6 * (time.perf_counter() - started) / len(batch)
    assert found == len(batch)
    return {"entries": len(cache), "key_us": key_us, "get_us": get_us}


async def achieved_concurrency(
    root: str, latency_s: float, transport: str = DEFAULT_TRANSPORT
) -> dict[str, Any]:
    provider = Timed(
        OpenAIProvider("bench", base_url=f"{root}/v1", api_key_env=NO_KEY_ENV, transport=transport)
    )
    client = LLMClient(provider, limits=EndpointLimits(max_in_flight=CONCURRENCY_LIMIT))
    batch = requests(CONCURRENCY_LIMIT * 6, f"slow{latency_s}")
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(client.complete(r, stage="bench") for r in batch))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await provider.inner.aclose()
    server = httpx.get(f"{root}/stats").json()
    server_mean = server["mean_in_flight"]
    return {
        "latency_s": latency_s,
        "transport": transport,
        "limit": CONCURRENCY_LIMIT,
        "requests": len(batch),
        "elapsed_s": elapsed,
        "ideal_s": 6 * latency_s,
        "server_mean_in_flight": server_mean,
        "server_peak_in_flight": server["peak_in_flight"],
        "client_mean_in_flight": mean_overlap(provider.intervals),
        "fraction_of_limit": server_mean / CONCURRENCY_LIMIT,
        "process_cpu_ms_per_request": 1000 * cpu / len(batch),
    }


def compare_transports(latency_s: float, rounds: int = 2) -> list[dict[str, Any]]:
    """Every transport (direct, and the OpenAI SDK on aiohttp and on httpx), alternated
    (`rounds` each, a fresh server each time) so that a change in machine load does not
    favour one of them."""
    runs = []
    for _ in range(rounds):
        for transport in TRANSPORTS:
            with server_process(latency_s) as root:
                runs.append(asyncio.run(achieved_concurrency(root, latency_s, transport)))
    return runs


def main() -> dict[str, Any]:
    load_before = load_1m()
    with tempfile.TemporaryDirectory() as tmp:
        with server_process(0.0) as root:
            zero = asyncio.run(zero_latency(f"{root}/v1", Path(tmp) / "zero.sqlite"))
        ceiling = asyncio.run(fake_ceiling(Path(tmp) / "fake.sqlite"))
        lookup = cache_lookup(Path(tmp) / "lookup.sqlite")
    concurrency = []
    for latency in LATENCIES_S:
        with server_process(latency) as root:
            concurrency.append(asyncio.run(achieved_concurrency(root, latency)))
    target = concurrency[0]
    transports = compare_transports(LATENCIES_S[0])
    load_after = os.getloadavg()[0]
    limiter_fraction = asyncio.run(limiter_alone(LATENCIES_S[0]))
    results: dict[str, Any] = {
        "zero_latency": {**zero, "fake_provider_rps": ceiling},
        "cache_lookup": lookup,
        "concurrency": concurrency,
        "transports": transports,
        "limiter_alone_fraction_of_limit": limiter_fraction,
        "targets": {
            "overhead_ms_median_below_2": zero["overhead_ms_median"] < 2.0,
            "concurrency_at_least_95_percent_at_0.2s": target["fraction_of_limit"] >= 0.95,
        },
    }
    rows = [
        ("provider alone, zero-latency server", f"{zero['provider_rps']:.0f} req/s"),
        ("LLMClient, cache misses", f"{zero['client_miss_rps']:.0f} req/s"),
        ("LLMClient, cache hits", f"{zero['client_hit_rps']:.0f} req/s"),
        ("LLMClient + FakeProvider (no HTTP)", f"{ceiling:.0f} req/s"),
        (
            "client overhead per request (median / p95)",
            f"{zero['overhead_ms_median']:.3f} / {zero['overhead_ms_p95']:.3f} ms",
        ),
        (
            f"cache key + lookup ({lookup['entries']} entries)",
            f"{lookup['key_us']:.1f} + {lookup['get_us']:.1f} us",
        ),
    ]
    for run in concurrency:
        rows.append(
            (
                f"in flight vs limit {CONCURRENCY_LIMIT} @ {run['latency_s']}s (server/client)",
                f"{run['server_mean_in_flight']:.1f} / {run['client_mean_in_flight']:.1f} mean, "
                f"{run['server_peak_in_flight']} peak ({100 * run['fraction_of_limit']:.1f}%), "
                f"{run['elapsed_s']:.2f}s vs {run['ideal_s']:.1f}s ideal, "
                f"{run['process_cpu_ms_per_request']:.2f} ms CPU/req",
            )
        )
    for run in transports:
        rows.append(
            (
                f"transport {run['transport']} @ {run['latency_s']}s",
                f"{run['process_cpu_ms_per_request']:.2f} ms CPU/req, "
                f"{100 * run['fraction_of_limit']:.1f}% of the limit in flight",
            )
        )
    rows.append(
        (
            f"LLMClient limiter alone @ {LATENCIES_S[0]}s (no HTTP)",
            f"{100 * limiter_fraction:.1f}% of {CONCURRENCY_LIMIT}",
        )
    )
    rows.append(
        (
            "load average (1 min) before / after",
            f"{load_before:.1f} / {load_after:.1f}",
        )
    )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    out = write("llm", results, load_before)  # the machine stamped in
    print(f"targets: {results['targets']}  ->  {out.relative_to(ROOT)}")
    return results


if __name__ == "__main__":
    main()
