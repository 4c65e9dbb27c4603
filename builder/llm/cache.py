"""Persistent, content-addressed request cache shared by all stages and processes.

SQLite in WAL mode: one small file, atomic transactions (a crash mid-write leaves the previous
state), many readers alongside a writer, and several processes may write (they wait on the
lock). A lookup is one indexed SELECT (tens of microseconds; see benchmarks/bench_llm.py).
Only completions and usage are stored; the key is a hash of what determines the answer, never
of credentials or headers, and nothing about auth reaches this module.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from builder.llm.endpoints import LOOPBACK, endpoint_identity
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse, Completion, Usage
from schemas.trajectories import ToolCall

log = logging.getLogger(__name__)

KEY_VERSION = 1
__all__ = ["LOOPBACK", "RequestCache", "endpoint_identity", "key_for", "request_key"]
_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name", "content_parts")


def request_key(provider: str, base_url: str | None, model: str, request: ChatRequest) -> str:
    """SHA-256 over everything that determines the answer.

    Includes every sampling parameter (n, seed, stop, schema...); excludes `cache_prefix`
    (a caching hint) and `is_demo` (not sent). Canonical JSON makes it stable across runs.
    """
    messages = [{f: _plain(getattr(m, f)) for f in _MESSAGE_FIELDS} for m in request.messages]
    body = {
        "v": KEY_VERSION,
        "provider": provider,
        "base_url": endpoint_identity(base_url),
        "model": model,
        "messages": messages,
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
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_for(provider: ChatProvider, request: ChatRequest) -> str:
    return request_key(provider.provider, provider.base_url, provider.model, request)


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [dataclasses.asdict(v) if isinstance(v, ToolCall) else v for v in value]
    return value


def encode_response(response: ChatResponse) -> str:
    """The stored payload: completions, usage, model, latency. Nothing else."""
    payload = {
        "completions": [
            {
                "text": c.text,
                "tool_calls": [dataclasses.asdict(t) for t in c.tool_calls],
                "finish_reason": c.finish_reason,
            }
            for c in response.completions
        ],
        "usage": dataclasses.asdict(response.usage),
        "model": response.model,
        "latency_s": response.latency_s,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def decode_response(text: str) -> ChatResponse:
    data = json.loads(text)
    completions = tuple(
        Completion(c["text"], tuple(ToolCall(**t) for t in c["tool_calls"]), c["finish_reason"])
        for c in data["completions"]
    )
    return ChatResponse(
        completions, Usage(**data["usage"]), data["latency_s"], data["model"], cached=True
    )


class RequestCache:
    """`get(key)` / `put(key, response)` over one SQLite file, with hit/miss counters."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL)"
        )

    def get(self, key: str) -> ChatResponse | None:
        """The stored response, or None (a miss). An unreadable row counts as a miss."""
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        response = None
        if row is not None:
            try:
                response = decode_response(row[0])
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
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, payload) VALUES (?, ?)", (key, payload)
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
