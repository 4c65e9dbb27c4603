"""Requests deferred to batch jobs, and the submit → poll → collect cycle of one round.

During a round, a client whose role is batched does not send a cache miss: it hands the request
to `BatchQueue.defer` and raises `BatchDeferred`, and the step waits for the next round. Between
rounds the queue submits what was deferred (never a request that is already with the
provider), polls with backoff until every job has ended, and writes each complete answer into
the request cache under the request's own key, so the next round reads it like any cache hit
and every downstream table is what an online run with the same answers would write.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from builder.errors import (
    BudgetExceededError,
    LLMError,
    NapError,
    PermanentLLMError,
    TransientLLMError,
)
from builder.llm.batch.backend import BatchBackend, Line
from builder.llm.batch.ledger import BatchLedger, JobRow
from builder.llm.budget import Budget, Reservation
from builder.llm.cache import RequestCache
from builder.llm.error_kinds import refusal_kind
from builder.llm.protocol import ChatRequest, ChatResponse

# (role, request) -> worst-case (USD at batch prices, tokens) of a request, for the budget
WorstCase = Callable[[str, ChatRequest], tuple[float, int]]

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3  # jobs one request may go out in before its step is given up


class BatchDeferred(NapError):
    """Raised in place of an answer: the request waits for the next round's batch."""


@dataclass(frozen=True)
class PollPolicy:
    first_s: float = 30.0
    factor: float = 1.5
    max_s: float = 600.0


@dataclass
class RoundReport:
    submitted_jobs: int = 0
    submitted_lines: int = 0
    collected: int = 0
    failed_lines: int = 0
    recovered_jobs: int = 0
    jobs: list[str] = field(default_factory=list)


class BatchQueue:
    def __init__(
        self,
        ledger: BatchLedger,
        cache: RequestCache,
        backends: dict[str, BatchBackend],
        *,
        poll: PollPolicy | None = None,
        on_answer: Callable[[str, str, ChatResponse], float] | None = None,
        budget: Budget | None = None,
        worst_case: WorstCase | None = None,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.max_attempts = max_attempts
        self.ledger = ledger
        self.cache = cache
        self.backends = backends  # role -> backend
        self.poll_policy = poll or PollPolicy()
        self.on_answer = on_answer  # (role, stage, response) -> USD at batch prices
        self.budget = budget
        self.worst_case = worst_case
        self.budget_error: BudgetExceededError | None = None  # set when a reservation failed
        self._reservations: dict[str, Reservation] = {}
        self._deferred: dict[str, dict[str, ChatRequest]] = {role: {} for role in backends}
        self._requests: dict[str, ChatRequest] = {}
        self._stages: dict[str, str] = {}

    def batched(self, role: str) -> bool:
        return role in self.backends

    def defer(self, role: str, key: str, request: ChatRequest, stage: str = "") -> None:
        self._deferred[role][key] = request
        self._requests[key] = request
        self._stages[key] = stage or role

    def blocked(self, key: str) -> LLMError | None:
        """Why a request must not be deferred again: a line of it was refused (its reason,
        read like an online refusal: a context overflow drops the step), or its lines failed
        in `max_attempts` jobs. None while it may still go (or is with the provider)."""
        reason = self.ledger.refusal(key)
        if reason is not None:
            refusal = refusal_kind(None, reason)
            kind = refusal.kind if refusal is not None else "bad_request"
            return PermanentLLMError(f"batch line refused: {reason}", kind=kind)
        if key in self.ledger.pending_keys() or self.cache.get(key) is not None:
            return None
        if self.ledger.attempts(key) >= self.max_attempts:
            return TransientLLMError(
                f"batch request failed in {self.max_attempts} jobs; last: "
                f"{next(iter(self.ledger.reasons('failed')), 'failed')}",
                kind="batch_failed",
            )
        return None

    def open_jobs(self) -> int:
        return len(self.ledger.jobs(("submitting", "submitted")))

    @property
    def waiting(self) -> int:
        return sum(len(d) for d in self._deferred.values())

    async def run_round(self) -> RoundReport:
        """Submit what this round deferred, then wait for every open job and collect it."""
        report = RoundReport()
        await self._recover(report)
        await self._submit(report)
        await self._collect(report)
        for deferred in self._deferred.values():
            deferred.clear()
        return report

    # --- submit ----------------------------------------------------------------------------

    async def _submit(self, report: RoundReport) -> None:
        pending = self.ledger.pending_keys()
        for role, deferred in self._deferred.items():
            backend = self.backends[role]
            fresh = [
                (key, request)
                for key, request in deferred.items()
                if key not in pending
                and self.cache.get(key) is None
                and self.blocked(key) is None
                and self._reserve(role, key, request)
            ]
            for chunk in _chunks(backend, fresh, self.ledger):
                handle = self.ledger.record_intent(
                    backend.provider, role, [(ln.custom_id, k, ln.sample) for k, ln in chunk]
                )
                job_id = await backend.submit(handle, [line for _, line in chunk])
                self.ledger.record_submitted(handle, job_id)
                report.submitted_jobs += 1
                report.submitted_lines += len(chunk)
                report.jobs.append(job_id)
                log.info("batch %s (%s, %d requests) submitted", job_id, role, len(chunk))

    def _reserve(self, role: str, key: str, request: ChatRequest) -> bool:
        """Hold the request's worst case at batch prices; False once the budget refuses."""
        if self.budget is None or self.worst_case is None or self.budget_error is not None:
            return self.budget_error is None
        usd, tokens = self.worst_case(role, request)
        try:
            self._reservations[key] = self.budget.reserve(usd, tokens)
        except BudgetExceededError as exc:
            self.budget_error = exc
            return False
        return True

    def _settle(self, key: str, response: ChatResponse | None, cost: float) -> None:
        if self.budget is None:
            return
        reservation = self._reservations.pop(key, Reservation(0.0, 0))
        self.budget.settle(reservation, None if response is None else response.usage, cost)

    async def _recover(self, report: RoundReport) -> None:
        """Jobs recorded as `submitting` when the last run died: found again, or freed."""
        for job in self.ledger.jobs(("submitting",)):
            job_id = await self.backends[job.role].find(job.handle)
            if job_id is None:
                self.ledger.abandon(job.handle, "not found at the provider after a crash")
            else:
                self.ledger.record_submitted(job.handle, job_id)
                report.recovered_jobs += 1

    # --- poll and collect ------------------------------------------------------------------

    async def _collect(self, report: RoundReport) -> None:
        delay = self.poll_policy.first_s
        while True:
            open_jobs = self.ledger.jobs(("submitted",))
            if not open_jobs:
                return
            ended = False
            for job in open_jobs:
                if await self._poll(job, report):
                    ended = True
            if not ended:
                await asyncio.sleep(delay)
                delay = min(delay * self.poll_policy.factor, self.poll_policy.max_s)

    async def _poll(self, job: JobRow, report: RoundReport) -> bool:
        backend = self.backends[job.role]
        assert job.job_id is not None
        status = await backend.poll(job.job_id)
        if not status.ended:
            self.ledger.record_poll(job.handle, "submitted", status.progress)
            return False
        outcomes = await backend.results(job.job_id)
        lines = self.ledger.lines(job.handle)
        states: dict[str, str] = {}
        reasons: dict[str, str] = {}
        for line in lines:
            outcome = outcomes.get(line.custom_id, _MISSING)
            states[line.custom_id] = (
                "done" if outcome.ok else "refused" if outcome.permanent else "failed"
            )
            if not outcome.ok:
                reasons[line.custom_id] = outcome.error or "no result"
        by_key: dict[str, list[tuple[int, str]]] = {}
        for line in lines:
            by_key.setdefault(line.cache_key, []).append((line.sample, line.custom_id))
        for key, samples in by_key.items():
            answered = all(states[c] == "done" for _, c in samples)
            answers = [outcomes[c].body or {} for _, c in sorted(samples)] if answered else []
            if not answered or not self._store(job.role, key, answers, report):
                for _, c in samples:  # asked again when needed, unless refused
                    states[c] = "refused" if states[c] == "refused" else "failed"
                self._settle(key, None, 0.0)
        self.ledger.record_lines(states, reasons)
        failed = sum(1 for s in states.values() if s != "done")
        report.failed_lines += failed
        progress = {**status.progress, "failed_lines": failed}
        self.ledger.record_poll(job.handle, f"ended:{status.status}", progress)
        if failed:
            refused = sum(1 for s in states.values() if s == "refused")
            log.warning(
                "batch %s ended %s with %d failed requests (%d refused, never sent again; the "
                "others go again next round, at most %d times)",
                job.job_id, status.status, failed, refused, self.max_attempts,
            )  # fmt: skip
        return True

    def _store(self, role: str, key: str, answers: list[dict], report: RoundReport) -> bool:
        request = self._requests.get(key)
        if request is None:
            return False  # no step of this run asks for it any more
        try:
            response = self.backends[role].response(request, answers)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("batch answer for %s unusable (%s): it goes again next round", key, exc)
            return False
        self.cache.put(key, response)
        report.collected += 1
        cost = 0.0
        if self.on_answer is not None:
            cost = self.on_answer(role, self._stages.get(key, role), response)
        self._settle(key, response, cost)
        return True


class _Missing:
    ok = False
    error = "no result for this line"
    permanent = False


_MISSING = _Missing()


def _chunks(
    backend: BatchBackend, items: list[tuple[str, ChatRequest]], ledger: BatchLedger
) -> list[list[tuple[str, Line]]]:
    """Jobs within the provider's limits on requests and bytes per batch."""
    chunks: list[list[tuple[str, Line]]] = [[]]
    size = 0
    for key, request in items:
        stem = f"{key[:40]}-{ledger.attempts(key)}"
        for line in backend.lines(stem, request):
            line_bytes = len(json.dumps(line.body)) + 200
            if chunks[-1] and (
                len(chunks[-1]) >= backend.max_requests or size + line_bytes > backend.max_bytes
            ):
                chunks.append([])
                size = 0
            chunks[-1].append((key, line))
            size += line_bytes
    return [chunk for chunk in chunks if chunk]
