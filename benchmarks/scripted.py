"""A job against the scripted endpoint, and its floor: what the whole-run benches share.

- `endpoint_process`: the scripted teacher/agent (`tests.run.nap_server --fast`) in a child
  process, so it shares no GIL with the run; `control` reads or resets it;
- `whole_run`: `nap-builder run` as a program, timed from spawn to exit, with its CPU time;
- the floor: the very bodies the run sent (`recorded`, byte for byte) POSTed again by a bare
  aiohttp client at the same concurrency (`replay`), in this process or, timed like the run,
  as a program of its own (`replay_process`: `python -m benchmarks.scripted FILE URL N`).

This module imports nothing heavy at the top, so the floor as a program pays only Python's
start and aiohttp's import, as a bare client would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def endpoint_process(latency: float) -> Iterator[str]:
    """The scripted endpoint in a child process; yields its base URL (…/v1)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.run.nap_server", "--latency", str(latency), "--fast"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def control(base_url: str, what: str) -> dict[str, Any]:
    """GET /stats, /bodies or /reset on the scripted server."""
    import httpx

    root = base_url.removesuffix("/v1")
    return dict(httpx.get(f"{root}/{what}", timeout=60).json())


def recorded(base_url: str) -> list[bytes]:
    """The request bodies the scripted server received since its last reset, as sent
    (`GET /payloads`; no JSON round trip, which tens of thousands of bodies would feel)."""
    import httpx

    root = base_url.removesuffix("/v1")
    return split_frames(httpx.get(f"{root}/payloads", timeout=600).content)


def join_frames(payloads: Sequence[bytes]) -> bytes:
    """Each payload after its length and a newline (the `/payloads` framing)."""
    return b"".join(b"%d\n%s" % (len(p), p) for p in payloads)


def split_frames(data: bytes) -> list[bytes]:
    """The inverse of `join_frames`."""
    frames, pos = [], 0
    while pos < len(data):
        newline = data.index(b"\n", pos)
        end = newline + 1 + int(data[pos:newline])
        frames.append(data[newline + 1 : end])
        pos = end
    return frames


async def replay(base_url: str, payloads: Sequence[bytes], concurrency: int) -> float:
    """The floor: `payloads` POSTed by a bare aiohttp client (no SDK, no pydantic, one
    connection per worker), `concurrency` at a time; seconds from first send to last reply."""
    import aiohttp

    url = f"{base_url}/chat/completions"
    headers = {"content-type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        queue = iter(payloads)

        async def worker() -> None:
            for payload in queue:
                async with session.post(url, data=payload, headers=headers) as response:
                    response.raise_for_status()
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started


def replay_process(base_url: str, payloads: Sequence[bytes], concurrency: int, work: Path) -> float:
    """The floor as a program: `replay` in a fresh Python process, timed from spawn to exit
    like the run (its start-up, reading the bodies and the aiohttp import included)."""
    path = work / "payloads.bin"
    path.write_bytes(join_frames(payloads))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "benchmarks.scripted", str(path), base_url, str(concurrency)],
        check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return time.perf_counter() - started


def whole_run(
    cfg_path: Path,
    out: Path,
    overrides: Sequence[str] = (),
    env: dict[str, str] | None = None,
    watch: Callable[[int], AbstractContextManager[object]] | None = None,
    spawned: list[float] | None = None,
) -> tuple[float, float]:
    """`nap-builder run CFG [--set ...]` in a fresh process, on an emptied `out`: seconds
    from spawn to exit, and its CPU seconds (user + system; on a loaded machine the wall time
    says more about the neighbours). `watch(pid)` is held open while it runs (a sampler);
    `spawned` receives the spawn time (perf_counter: the server's clock too)."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    if spawned is not None:
        spawned.append(started)
    proc = subprocess.Popen(
        run_argv(cfg_path, overrides),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    try:
        with watch(proc.pid) if watch else contextlib.nullcontext():
            stdout, stderr = proc.communicate()
    finally:
        if proc.poll() is None:  # the bench failed around it: leave no run behind
            proc.kill()
            proc.wait()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}):\n{stdout}\n{stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def run_argv(cfg_path: Path, overrides: Sequence[str] = ()) -> list[str]:
    """The command line of a run: the CLI module, the config, one `--set` per override."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    return [sys.executable, "-m", "builder.cli", "run", str(cfg_path), *sets]


if __name__ == "__main__":  # the floor as a program (`replay_process`)
    path, url, concurrency = sys.argv[1:4]
    asyncio.run(replay(url, split_frames(Path(path).read_bytes()), int(concurrency)))
