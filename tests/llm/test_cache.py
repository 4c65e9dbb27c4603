"""The persistent request cache: keys, hits against a real server, concurrency, crashes."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from builder.llm.cache import RequestCache, request_key
from builder.llm.client import LLMClient
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from schemas.trajectories import Message, ToolCall
from tests.llm.servers import FakeAPIServer

REPO = Path(__file__).resolve().parents[2]
BASE = ChatRequest((Message("system", "s"), Message("user", "u")), temperature=0.7, seed=1)
RESPONSE = ChatResponse(
    (Completion("a", (ToolCall("c", "bash", "{}"),), "tool_calls"), Completion("b")),
    Usage(10, 4, 2),
    0.5,
    "m-1",
)


def model_of(cache: RequestCache, key: str) -> str | None:
    response = cache.get(key)
    return None if response is None else response.model


def key(request: ChatRequest, model: str = "m", base_url: str | None = "http://h/v1") -> str:
    return request_key("openai", base_url, model, request)


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.8},
        {"seed": 2},
        {"seed": None},
        {"n": 2},
        {"top_p": 0.5},
        {"max_tokens": 9},
        {"stop": ("x",)},
        {"json_schema": {"type": "object"}},
        {"tools": ({"type": "function", "function": {"name": "t"}},)},
        {"messages": (Message("system", "s"), Message("user", "u!"))},
        {"messages": (Message("system", "s"), Message("user", "u", name="x"))},
    ],
)
def test_anything_that_changes_the_answer_changes_the_key(change: dict[str, Any]) -> None:
    assert key(dataclasses.replace(BASE, **change)) != key(BASE)


def test_endpoint_and_model_are_part_of_the_key_but_caching_hints_are_not() -> None:
    assert key(BASE, model="m2") != key(BASE)
    assert key(BASE, base_url="http://other/v1") != key(BASE)
    assert key(BASE, base_url="http://h/v1/") == key(BASE)
    assert key(BASE, base_url="http://h:8000/v1") != key(BASE, base_url="http://h:8001/v1")
    # a managed local server gets a new port each run: the rerun must still hit
    assert key(BASE, base_url="http://127.0.0.1:41234/v1") == key(
        BASE, base_url="http://localhost:5555/v1/"
    )
    assert key(BASE, base_url="http://127.0.0.1:41234/v1") != key(BASE, base_url=None)
    assert key(dataclasses.replace(BASE, cache_prefix=1)) == key(BASE)
    demo = dataclasses.replace(
        BASE, messages=(Message("system", "s", is_demo=True), BASE.messages[1])
    )
    assert key(demo) == key(BASE)


def test_a_stored_response_reads_back_equal_and_marked_cached(tmp_path: Path) -> None:
    with RequestCache(tmp_path / "c.sqlite") as cache:
        assert cache.get("k") is None
        cache.put("k", RESPONSE)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        assert cache.get("k") == dataclasses.replace(RESPONSE, cached=True)
        assert (cache.hits, cache.misses, len(cache)) == (1, 0, 1)


def test_second_identical_call_sends_no_request_and_a_changed_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cache-test")
    path = tmp_path / "cache.sqlite"
    variants = [
        BASE,
        BASE,
        dataclasses.replace(BASE, temperature=1.0),
        dataclasses.replace(BASE, seed=2),
    ]

    async def run(base_url: str) -> tuple[list[ChatResponse], LLMClient]:
        client = LLMClient(OpenAIProvider("m", base_url=base_url), cache=RequestCache(path))
        return [await client.complete(r, stage="teacher") for r in variants], client

    with FakeAPIServer() as server:
        (first, again, hotter, reseeded), client = asyncio.run(run(server.base_url))
        assert server.count == 3
        stats = client.usage.stage("teacher")
        assert (stats.cache_hits, stats.cache_misses, stats.requests) == (1, 3, 3)
        assert again.cached and not first.cached
        assert again.completions == first.completions
        assert first.completions != hotter.completions != reseeded.completions

        assert client.cache is not None
        client.cache.close()  # as the first process ends
        rerun, client = asyncio.run(run(server.base_url))  # a new process would see the same
        assert server.count == 3
        assert client.usage.stage("teacher").cache_hits == 4
        assert [r.completions for r in rerun] == [
            first.completions,
            first.completions,
            hotter.completions,
            reseeded.completions,
        ]


def _writer(path: str, worker: int, count: int) -> None:
    cache = RequestCache(path)
    for i in range(count):
        response = dataclasses.replace(RESPONSE, model=f"w{worker}-{i}")
        cache.put(f"k{worker}-{i}", response)
        cache.put("shared", response)
    cache.close()


def test_several_processes_can_write_at_once_and_every_entry_survives(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    RequestCache(path).close()
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(path, w, 150)) for w in range(3)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    cache = RequestCache(path)
    assert len(cache) == 3 * 150 + 1
    for w in range(3):
        assert all(model_of(cache, f"k{w}-{i}") == f"w{w}-{i}" for i in range(150))
    assert cache.get("shared") is not None


CRASHING_WRITER = """
import dataclasses, sys
from builder.llm.cache import RequestCache
from builder.llm.protocol import ChatResponse, Completion
cache = RequestCache(sys.argv[1])
i = 0
while True:
    cache.put(f"k{i}", ChatResponse((Completion("x" * 5000),), model=f"m{i}"))
    i += 1
"""


def test_a_writer_killed_mid_write_leaves_a_readable_cache(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writer = subprocess.Popen([sys.executable, "-c", CRASHING_WRITER, str(path)], env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if path.exists():
            with RequestCache(path) as probe:
                if len(probe) > 200:
                    break
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    cache = RequestCache(path)
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    stored = len(cache)
    assert stored > 200
    assert all(model_of(cache, f"k{i}") == f"m{i}" for i in range(stored))
    assert cache.misses == 0


def test_a_torn_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "torn.sqlite"
    cache = RequestCache(path)
    cache.put("k", RESPONSE)
    cache.flush()
    db = sqlite3.connect(path)
    db.execute("UPDATE responses SET payload = substr(payload, 1, 20) WHERE key = 'k'")
    db.commit()
    assert cache.get("k") is None
    assert cache.misses == 1
    cache.put("k", RESPONSE)
    assert cache.get("k") == dataclasses.replace(RESPONSE, cached=True)


def test_keys_are_the_sha256_of_the_whole_canonical_body_so_old_caches_still_hit() -> None:
    """The key is defined as SHA-256 over the sorted, compact JSON of the request's answer-
    determining fields; building it from per-message pieces must give exactly that, for
    messages with tool calls, non-ASCII text, content lists and the same object reused."""
    shared = Message("assistant", "", tool_calls=[ToolCall("c1", "bash", '{"cmd": "ls é"}')])
    requests = [
        dataclasses.replace(
            BASE,
            messages=(
                Message("system", 'sys ü \u2028 "q"'),
                Message("user", "u", content_parts='[{"type": "text", "text": "u"}]'),
                shared,
                Message("tool", "out\n", tool_call_id="c1", name="bash"),
                shared,
            ),
            tools=({"type": "function", "function": {"name": "sh", "parameters": {"b": 1}}},),
            stop=("\n",),
            json_schema={"type": "object", "required": ["z", "a"]},
        ),
        BASE,
    ]
    for request in requests * 2:  # the second round reads the per-message memo
        body = {
            "v": 1,
            "provider": "openai",
            "base_url": "http://h/v1",
            "model": "m",
            "messages": [
                {
                    "role": m.role,
                    "content": m.content,
                    "tool_calls": [dataclasses.asdict(c) for c in m.tool_calls],
                    "tool_call_id": m.tool_call_id,
                    "name": m.name,
                    "content_parts": m.content_parts,
                }
                for m in request.messages
            ],
            "tools": request.tools,
            "n": request.n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
            "stop": request.stop,
            "json_schema": request.json_schema,
        }
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert key(request) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_answers_not_yet_written_are_hits_and_reach_the_file_on_close(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    cache.put("k", RESPONSE)
    assert cache.get("k") == dataclasses.replace(RESPONSE, cached=True)  # from memory
    cache.close()
    stored = sqlite3.connect(path).execute("SELECT COUNT(*) FROM responses").fetchone()
    assert stored == (1,)


def test_a_cache_dropped_without_close_still_writes_its_answers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    code = (
        "import sys; from builder.llm.cache import RequestCache; "
        "from builder.llm.protocol import ChatResponse, Completion; "
        "cache = RequestCache(sys.argv[1]); "
        "[cache.put(f'k{i}', ChatResponse((Completion('x'),), model=f'm{i}')) for i in range(5)]"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=True)
    cache = RequestCache(path)
    assert [model_of(cache, f"k{i}") for i in range(5)] == [f"m{i}" for i in range(5)]


def _locked_db(path: Path) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A database another connection holds exclusively, and an opener that gets SQLite's
    "database is locked" at once (no busy wait), as a WAL recovery in progress gives it."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    return holder, sqlite3.connect(path, timeout=0, isolation_level=None)


def test_opening_a_database_locked_for_a_moment_waits_for_it(tmp_path: Path) -> None:
    from builder.llm.cache import while_locked

    holder, opener = _locked_db(tmp_path / "db.sqlite")
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            holder.execute("COMMIT")  # the recovering process is done

    while_locked(lambda: opener.execute("PRAGMA journal_mode=WAL"), 60, sleep)
    assert len(waits) == 2
    assert opener.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_lock_that_outlasts_the_timeout_and_other_errors_are_raised(tmp_path: Path) -> None:
    from builder.llm.cache import while_locked

    _, opener = _locked_db(tmp_path / "db.sqlite")
    waits: list[float] = []
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        while_locked(lambda: opener.execute("PRAGMA journal_mode=WAL"), 0, waits.append)
    unlocked = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        while_locked(lambda: unlocked.execute("SELECT * FROM missing"), 60, waits.append)
    assert waits == []
