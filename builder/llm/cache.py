"""Persistent, content-addressed request cache shared by all stages and processes.

SQLite in WAL mode: one small file, atomic transactions (a crash mid-write leaves the previous
state), many readers alongside a writer, and several processes may write (they wait on the
lock). A lookup is one indexed SELECT (tens of microseconds; see benchmarks/bench_llm.py).
Only completions and usage are stored; the key is a hash of what determines the answer, never
of credentials or headers, and nothing about auth reaches this module.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from builder.llm.endpoint_kinds import LOOPBACK, endpoint_identity
from builder.llm.fragments import FragmentMemo, dumps, splice
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse, Completion, Usage
from schemas.common import to_row
from schemas.trajectories import Message, ToolCall

log = logging.getLogger(__name__)

KEY_VERSION = 1
__all__ = ["LOOPBACK", "RequestCache", "endpoint_identity", "key_for", "request_key"]
_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name", "content_parts")


def request_key(provider: str, base_url: str | None, model: str, request: ChatRequest) -> str:
    """SHA-256 over everything that determines the answer.

    Includes every sampling parameter (n, seed, stop, schema...); excludes `cache_prefix`
    (a caching hint) and `is_demo` (not sent). Canonical JSON (sorted keys, compact) makes it
    stable across runs; each message's part is encoded once (`_KEY_MESSAGES`), the same text
    a dump of the whole body gives.
    """
    fields = {
        "v": KEY_VERSION,
        "provider": provider,
        "base_url": endpoint_identity(base_url),
        "model": model,
        "tools": request.tools,
        "n": request.n,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "stop": request.stop,
        "json_schema": request.json_schema,
    }
    messages = _KEY_MESSAGES.array(request.messages)
    text = splice(fields, "messages", messages, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_message(message: Message, _: bool) -> str:
    return dumps({f: _plain(getattr(message, f)) for f in _MESSAGE_FIELDS}, sort_keys=True)


_KEY_MESSAGES = FragmentMemo(_key_message)


def key_for(provider: ChatProvider, request: ChatRequest) -> str:
    return request_key(provider.provider, provider.base_url, provider.model, request)


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [to_row(v) if isinstance(v, ToolCall) else v for v in value]
    return value


def encode_response(response: ChatResponse) -> str:
    """The stored payload: completions, usage, model, latency. Nothing else. (Flat records
    as plain dicts: `dataclasses.asdict` deep-copies, and this runs for every answer.)"""
    payload = {
        "completions": [
            {
                "text": c.text,
                "tool_calls": [to_row(t) for t in c.tool_calls],
                "finish_reason": c.finish_reason,
            }
            for c in response.completions
        ],
        "usage": to_row(response.usage),
        "model": response.model,
        "latency_s": response.latency_s,
    }
    return dumps(payload)


def decode_response(text: str) -> ChatResponse:
    data = json.loads(text)
    completions = tuple(
        Completion(c["text"], tuple(ToolCall(**t) for t in c["tool_calls"]), c["finish_reason"])
        for c in data["completions"]
    )
    return ChatResponse(
        completions, Usage(**data["usage"]), data["latency_s"], data["model"], cached=True
    )


def _write_pending(db: sqlite3.Connection, pending: dict[str, str], lock: threading.Lock) -> None:
    with lock:
        if not pending:
            return
        rows = list(pending.items())
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT OR REPLACE INTO responses (key, payload) VALUES (?, ?)", rows)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        pending.clear()


LOCKED_RETRY_S = 0.05


def while_locked(
    step: Callable[[], None], timeout_s: float, sleep: Callable[[float], None] = time.sleep
) -> None:
    """`step()`, tried again while SQLite says the database is locked, for up to `timeout_s`.

    Opening a WAL database another process is recovering (after a kill -9 of a process that
    had it open, as when Ray restarts a killed actor next to a live one) can fail with
    "database is locked" at once, without waiting for the busy timeout; the recovery takes
    milliseconds, so the opener waits it out instead of failing the shard."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        sleep(LOCKED_RETRY_S)


FLUSH_ROWS = 256  # answers written per transaction at most
FLUSH_S = 0.25  # the oldest unwritten answer waits at most this long (for the next put)


class RequestCache:
    """`get(key)` / `put(key, response)` over one SQLite file, with hit/miss counters.

    Answers are written in small transactions (`FLUSH_ROWS` / `FLUSH_S`, and on `flush` /
    `close`): one commit per answer cost more of the request loop than the HTTP request itself
    at 64 in flight. A kill -9 can lose the last quarter second of answers; they are asked
    again on resume (a shard's rows are written only once all its answers are in, so no row
    is lost or doubled). Unwritten answers are hits here already."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}
        self._pending_since = 0.0
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        while_locked(self._setup, busy_timeout_s)
        # a cache dropped without close (or left open at exit) still writes what it holds
        weakref.finalize(self, _write_pending, self._db, self._pending, self._lock)

    def _setup(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL)"
        )

    def get(self, key: str) -> ChatResponse | None:
        """The stored response, or None (a miss). An unreadable row counts as a miss."""
        with self._lock:
            payload = self._pending.get(key)
            if payload is None:
                row = self._db.execute(
                    "SELECT payload FROM responses WHERE key = ?", (key,)
                ).fetchone()
                payload = None if row is None else row[0]
        response = None
        if payload is not None:
            try:
                response = decode_response(payload)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning(
                    "request cache %s: unreadable entry %s ignored (%s)", self.path, key, exc
                )
        if response is None:
            self.misses += 1
        else:
            self.hits += 1
        return response

    def put(self, key: str, response: ChatResponse) -> None:
        payload = encode_response(response)
        now = time.monotonic()
        with self._lock:
            if not self._pending:
                self._pending_since = now
            self._pending[key] = payload
            due = len(self._pending) >= FLUSH_ROWS or now - self._pending_since >= FLUSH_S
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the answers not yet written, in one transaction."""
        _write_pending(self._db, self._pending, self._lock)

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._db.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
