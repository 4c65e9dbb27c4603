"""The shard worker: a Ray actor that holds the LLM clients and runs shards (and ingest tasks).

Started before the ingest, so its process start, imports and tokenizer load overlap the
ingest, which it then runs on that warm process instead of a cold Ray task worker. Its clients
are built once (its own connections, its node's request cache) with limits and budget swapped
for proxies of the coordinator, and `run_shard` runs unchanged on the actor's async loop. A
shard's outcome comes back as a tuple; errors are outcomes too, so one bad shard does not stop
the others and the driver settles them as the local scheduler does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any

from builder.config import PipelineConfig
from builder.errors import BudgetExceededError, PermanentLLMError
from builder.ingest.parallel import IngestSummary, process_task
from builder.llm.factory import Clients
from builder.nap.step import NapSettings
from builder.run.ray.coordinator import LimitSettings, RemoteBudget, RemoteLimits
from builder.run.ray.leases import LeasedBudget, LeasedLimits
from builder.run.shard_work import ScrubSettings, run_shard
from builder.run.shards import ShardPlan, write_json_atomic
from builder.steps.pairing import EligibilityRules
from builder.steps.tokens import cl100k

log = logging.getLogger(__name__)

Outcome = tuple[str, str, str]
"""(shard id, status: done | budget | permanent | failed, message)."""


def encode_plan(plan: ShardPlan) -> str:
    return json.dumps([plan.shard_id, str(plan.trajectories_file), list(plan.trajectory_ids)])


def decode_plan(text: str) -> ShardPlan:
    shard_id, path, ids = json.loads(text)
    return ShardPlan(shard_id, Path(path), tuple(ids))


def endpoint_key(client: Any) -> str:
    """One limits bucket per endpoint, as the local factory shares `EndpointLimits`."""
    return f"{client.provider.provider}|{client.provider.base_url}"


def use_coordinator(clients: Clients, actor: Any, limits: LimitSettings) -> None:
    """Route both clients' limits and budget through the coordinator actor, and the likelihood
    scorer's too: it shares the agent endpoint's limits, as the local factory has it. Slots
    come in leased blocks where the limits allow it (`builder.run.ray.leases`)."""
    budget: RemoteBudget | LeasedBudget
    budget = LeasedBudget(actor) if limits.leased else RemoteBudget(actor)
    proxies: dict[str, RemoteLimits | LeasedLimits] = {}
    for client in (clients.teacher, clients.agent):
        key = endpoint_key(client)
        if key not in proxies:  # one proxy per endpoint, as the local factory shares limits
            proxies[key] = (
                LeasedLimits(actor, key, limits.block, limits.share)
                if limits.leased
                else RemoteLimits(actor, key, budget)  # type: ignore[arg-type]
            )
        client.limits = proxies[key]  # type: ignore[assignment]
        client.budget = budget  # type: ignore[assignment]
    if clients.scorer is not None:
        clients.scorer.limits = clients.agent.limits
        clients.scorer.budget = budget  # type: ignore[assignment]
    clients.budget = budget  # type: ignore[assignment]


async def settle_leases(clients: Clients) -> None:
    """At a shard's end: leased slots freed since the last batch go back, and its costs
    reach the coordinator's ledger before the driver can read it."""
    for client in (clients.teacher, clients.agent):
        if isinstance(client.limits, LeasedLimits):
            client.limits.flush()
    if isinstance(clients.budget, LeasedBudget):
        await clients.budget.flush()


class ShardWorker:
    """The actor's state: one per process; a restarted actor is a new one (new name)."""

    def __init__(
        self,
        cfg: PipelineConfig,
        out_dir: str,
        digest: str,
        settings: NapSettings,
        coordinator: Any,
        clients_factory: Any,
        steps_in_flight: int,
        limits: LimitSettings,
    ) -> None:
        self.cfg = cfg
        self.out_dir = Path(out_dir)
        self.digest = digest
        self.settings = settings
        self.coordinator = coordinator
        self.factory = clients_factory
        self.scrub = ScrubSettings.of(cfg.scrub)
        self.steps_in_flight = steps_in_flight
        self.limits = limits
        self.clients: Clients | None = None
        self.slots: asyncio.Semaphore | None = None
        self.name = f"{time.time_ns()}-{socket.gethostname()}-{os.getpid()}"
        cl100k()  # the tokenizer (the NAP modules are imported above), while the driver ingests
        # who ran: lets an operator (or a test) find the worker processes of a run
        write_json_atomic(
            self.out_dir / "_state" / "workers" / f"{self.name}.json",
            {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()},
        )

    async def ready(self) -> str:
        """Returns once the constructor ran (the driver waits for every actor at the end of
        the ingest, so a worker that cannot start is reported before any shard)."""
        return self.name

    async def ingest(
        self,
        task_id: int,
        group: list[Any],
        out_dir: str,
        rules: EligibilityRules,
        scrub: ScrubSettings,
    ) -> IngestSummary:
        """One ingest task (`builder.ingest.parallel.process_task`) on this warm process; it
        blocks the actor's loop, which has nothing else to do before the shards."""
        return process_task(task_id, group, Path(out_dir), rules, scrub)

    def _clients(self) -> Clients:
        if self.clients is None:
            self.clients = self.factory(self.cfg, self.out_dir)
            use_coordinator(self.clients, self.coordinator, self.limits)
            self.slots = asyncio.Semaphore(self.steps_in_flight)
        return self.clients

    async def run(self, plan_text: str) -> Outcome:
        plan = decode_plan(plan_text)
        status, message = await self._one(plan)
        return plan.shard_id, status, message

    async def _one(self, plan: ShardPlan) -> tuple[str, str]:
        clients = self._clients()
        try:
            await run_shard(
                plan,
                self.out_dir,
                clients,
                self.settings,
                self.scrub,
                self.digest,
                step_slots=self.slots,
            )
        except BudgetExceededError as exc:
            return "budget", str(exc)
        except PermanentLLMError as exc:
            return "permanent", str(exc)
        except Exception as exc:  # counted as a failed shard, redone on resume, as locally
            log.exception("shard %s failed", plan.shard_id)
            return "failed", f"{type(exc).__name__}: {exc}"
        finally:
            await settle_leases(clients)
            self._write_usage(clients)
        return "done", ""

    def _write_usage(self, clients: Clients) -> None:
        """This actor's cumulative usage; a restarted actor writes a new file, and the report
        sums them all (a killed actor loses only what its in-flight shards spent)."""
        path = self.out_dir / "_state" / "usage" / f"{self.name}.json"
        write_json_atomic(path, clients.usage.as_dict())


__all__ = ["Outcome", "ShardWorker", "decode_plan", "encode_plan"]
