"""The batch ledger under OUT/_state: every job, every request line, and where each stands.

Why SQLite: a kill -9 at any moment leaves the last committed state, and a resumed run (even
days later) must know which requests are already with the provider, so that none is submitted
twice. The order of writes makes that hold: a job is recorded as `submitting`, with its lines,
before the provider is asked; the provider's job id is recorded right after. A job left in
`submitting` is looked up at the provider by its handle (OpenAI: batch metadata) before
anything is resubmitted.

Line states: `pending` (with the provider), `done` (answer collected), `failed` (error,
expired or cancelled: its request may be submitted again in a later job, up to the queue's
attempt cap), `refused` (a 4xx other than 408/429: never submitted again). Failed and refused
lines keep their reason.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ACTIVE = ("submitting", "submitted")


@dataclass(frozen=True)
class JobRow:
    handle: str
    provider: str
    role: str
    job_id: str | None
    status: str
    created_at: float
    updated_at: float
    polls: int
    progress: dict[str, Any]


@dataclass(frozen=True)
class LineRow:
    custom_id: str
    handle: str
    cache_key: str
    sample: int
    state: str


class BatchLedger:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS jobs (
                handle TEXT PRIMARY KEY, provider TEXT, role TEXT, job_id TEXT, status TEXT,
                created_at REAL, updated_at REAL, polls INTEGER DEFAULT 0, progress TEXT);
            CREATE TABLE IF NOT EXISTS lines (
                custom_id TEXT PRIMARY KEY, handle TEXT, cache_key TEXT, sample INTEGER,
                state TEXT);
            CREATE INDEX IF NOT EXISTS lines_key ON lines (cache_key);
            CREATE INDEX IF NOT EXISTS lines_handle ON lines (handle);
            """
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(lines)")}
        if "reason" not in columns:  # a ledger of an earlier version: kept, one column added
            self._db.execute("ALTER TABLE lines ADD COLUMN reason TEXT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- writing ---------------------------------------------------------------------------

    def record_intent(self, provider: str, role: str, lines: Iterable[tuple[str, str, int]]) -> str:
        """A new job in `submitting` with its lines (custom_id, cache_key, sample)."""
        handle = uuid.uuid4().hex[:16]
        now = time.time()
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO jobs VALUES (?, ?, ?, NULL, 'submitting', ?, ?, 0, '{}')",
                (handle, provider, role, now, now),
            )
            self._db.executemany(
                "INSERT INTO lines (custom_id, handle, cache_key, sample, state) "
                "VALUES (?, ?, ?, ?, 'pending')",
                [(c, handle, k, s) for c, k, s in lines],
            )
        return handle

    def record_submitted(self, handle: str, job_id: str) -> None:
        self._update_job(handle, job_id=job_id, status="submitted")

    def record_poll(self, handle: str, status: str, progress: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET status = ?, progress = ?, polls = polls + 1, updated_at = ? "
                "WHERE handle = ?",
                (status, json.dumps(progress), time.time(), handle),
            )

    def record_lines(self, states: dict[str, str], reasons: dict[str, str] | None = None) -> None:
        """custom_id -> `done`, `failed` or `refused`, with the reason of a failure."""
        reasons = reasons or {}
        with self._lock, self._transaction():
            self._db.executemany(
                "UPDATE lines SET state = ?, reason = ? WHERE custom_id = ?",
                [(state, reasons.get(c), c) for c, state in states.items()],
            )

    def abandon(self, handle: str, why: str) -> None:
        """A job that will never answer (never reached the provider): its lines may go again."""
        with self._lock, self._transaction():
            self._db.execute(
                "UPDATE lines SET state = 'failed' WHERE handle = ? AND state = 'pending'",
                (handle,),
            )
            self._db.execute(
                "UPDATE jobs SET status = 'abandoned', progress = ?, updated_at = ? "
                "WHERE handle = ?",
                (json.dumps({"why": why}), time.time(), handle),
            )

    def _update_job(self, handle: str, **values: Any) -> None:
        names = ", ".join(f"{k} = ?" for k in values)
        with self._lock:
            self._db.execute(
                f"UPDATE jobs SET {names}, updated_at = ? WHERE handle = ?",
                (*values.values(), time.time(), handle),
            )

    # --- reading ---------------------------------------------------------------------------

    def jobs(self, statuses: tuple[str, ...] | None = None) -> list[JobRow]:
        query = "SELECT * FROM jobs"
        args: tuple[str, ...] = ()
        if statuses:
            query += f" WHERE status IN ({', '.join('?' for _ in statuses)})"
            args = statuses
        with self._lock:
            rows = self._db.execute(query + " ORDER BY created_at", args).fetchall()
        return [
            JobRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8] or "{}"))
            for r in rows
        ]

    def lines(self, handle: str) -> list[LineRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT custom_id, handle, cache_key, sample, state FROM lines WHERE handle = ?",
                (handle,),
            ).fetchall()
        return [LineRow(*row) for row in rows]

    def pending_keys(self) -> set[str]:
        """Cache keys with a line still with the provider: never submitted again."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT lines.cache_key FROM lines JOIN jobs USING (handle) "
                f"WHERE lines.state = 'pending' AND jobs.status IN {ACTIVE}"
            ).fetchall()
        return {row[0] for row in rows}

    def refusal(self, cache_key: str) -> str | None:
        """The reason a line of this request was refused, if one was."""
        with self._lock:
            row = self._db.execute(
                "SELECT reason FROM lines WHERE cache_key = ? AND state = 'refused' LIMIT 1",
                (cache_key,),
            ).fetchone()
        return None if row is None else str(row[0] or "refused")

    def reasons(self, state: str) -> dict[str, int]:
        """Lines in `state` (`failed`, `refused`) by reason, most frequent first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT reason, COUNT(*) FROM lines WHERE state = ? GROUP BY reason "
                "ORDER BY COUNT(*) DESC",
                (state,),
            ).fetchall()
        return {str(reason or state): int(n) for reason, n in rows}

    def attempts(self, cache_key: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(DISTINCT handle) FROM lines WHERE cache_key = ?", (cache_key,)
            ).fetchone()
        return int(row[0])

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
