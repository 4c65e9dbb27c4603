"""The shard worker: a Ray Data callable class whose actors hold the LLM clients.

Each actor builds its clients once (its own connections, its node's request cache) with the
limits and budget swapped for proxies of the coordinator, then runs `run_shard` unchanged on
the async loop Ray Data keeps per actor. A shard's outcome comes back as a row; errors are
rows too, so one bad shard does not fail the dataset and the driver settles them as the
local scheduler does.
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

import numpy as np

from builder.config import PipelineConfig
from builder.errors import BudgetExceededError, PermanentLLMError
from builder.llm.factory import Clients
from builder.nap.step import NapSettings
from builder.run.ray.coordinator import RemoteBudget, RemoteLimits
from builder.run.shard_work import ScrubSettings, run_shard
from builder.run.shards import ShardPlan, write_json_atomic

log = logging.getLogger(__name__)


def encode_plan(plan: ShardPlan) -> str:
    return json.dumps([plan.shard_id, str(plan.trajectories_file), list(plan.trajectory_ids)])


def decode_plan(text: str) -> ShardPlan:
    shard_id, path, ids = json.loads(text)
    return ShardPlan(shard_id, Path(path), tuple(ids))


def endpoint_key(client: Any) -> str:
    """One limits bucket per endpoint, as the local factory shares `EndpointLimits`."""
    return f"{client.provider.provider}|{client.provider.base_url}"


def use_coordinator(clients: Clients, actor: Any) -> None:
    """Route both clients' limits and budget through the coordinator actor, and the likelihood
    scorer's too: it shares the agent endpoint's limits, as the local factory has it."""
    budget = RemoteBudget(actor)
    for client in (clients.teacher, clients.agent):
        client.limits = RemoteLimits(actor, endpoint_key(client), budget)  # type: ignore[assignment]
        client.budget = budget  # type: ignore[assignment]
    if clients.scorer is not None:
        clients.scorer.limits = clients.agent.limits
        clients.scorer.budget = budget  # type: ignore[assignment]
    clients.budget = budget  # type: ignore[assignment]


class ShardWorker:
    """`map_batches` UDF: one batch is one shard plan (a JSON string in column `plan`)."""

    def __init__(
        self,
        cfg: PipelineConfig,
        out_dir: str,
        digest: str,
        settings: NapSettings,
        coordinator: Any,
        clients_factory: Any,
        steps_in_flight: int,
    ) -> None:
        self.cfg = cfg
        self.out_dir = Path(out_dir)
        self.digest = digest
        self.settings = settings
        self.coordinator = coordinator
        self.factory = clients_factory
        self.scrub = ScrubSettings.of(cfg.scrub)
        self.steps_in_flight = steps_in_flight
        self.clients: Clients | None = None
        self.slots: asyncio.Semaphore | None = None
        self.name = f"{time.time_ns()}-{socket.gethostname()}-{os.getpid()}"
        # who ran: lets an operator (or a test) find the worker processes of a run
        write_json_atomic(
            self.out_dir / "_state" / "workers" / f"{self.name}.json",
            {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()},
        )

    def _clients(self) -> Clients:
        if self.clients is None:
            self.clients = self.factory(self.cfg, self.out_dir)
            use_coordinator(self.clients, self.coordinator)
            self.slots = asyncio.Semaphore(self.steps_in_flight)
        return self.clients

    async def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        rows: dict[str, list[str]] = {"shard_id": [], "status": [], "message": []}
        for text in batch["plan"]:
            plan = decode_plan(str(text))
            status, message = await self._one(plan)
            rows["shard_id"].append(plan.shard_id)
            rows["status"].append(status)
            rows["message"].append(message)
        return {k: np.array(v, dtype=object) for k, v in rows.items()}

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
            self._write_usage(clients)
        return "done", ""

    def _write_usage(self, clients: Clients) -> None:
        """This actor's cumulative usage; a restarted actor writes a new file, and the report
        sums them all (a killed actor loses only what its in-flight shards spent)."""
        path = self.out_dir / "_state" / "usage" / f"{self.name}.json"
        write_json_atomic(path, clients.usage.as_dict())
