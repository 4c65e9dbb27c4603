"""Shards asked for before the loop starts are used once, not prepared again, and the run's
tables are the same as without them (real ingest, real HTTP to the scripted endpoint)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import builder.run.shard_io as shard_io
import builder.run.shard_work as shard_work
from builder.config import config_hash, load_config
from builder.llm.factory import build_clients
from builder.nap.from_config import nap_settings
from builder.run.ingest_state import ensure_ingested
from builder.run.result import RunResult
from builder.run.schedule import prefetch_shards, run_shards, shard_width
from builder.run.shards import pending_shards
from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import nap_server, replicate_samples, run_config


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAPIServer]:
    with nap_server() as srv:
        yield srv


def run_all(
    out: Path, server: FakeAPIServer, monkeypatch: pytest.MonkeyPatch, prefetch: bool
) -> tuple[list[str], list[str]]:
    """Ingest, then every shard; returns (ids prepared inside the loop, ids prefetched)."""
    config = out.parent / f"{out.name}.yaml"
    corpus = replicate_samples(out.parent / "corpus", 3)  # 6 trajectories: 6 shards of 1
    config.write_text(run_config(corpus, server.base_url, out, limits={"concurrency": 1}))
    cfg = load_config(config)
    ensure_ingested(cfg, out)
    digest = config_hash(cfg)
    prepared_in_loop: list[str] = []
    real = shard_io.prepare_records

    def counted(out_dir: Path, plan: Any, scrub: Any) -> Any:
        prepared_in_loop.append(plan.shard_id)
        return real(out_dir, plan, scrub)

    monkeypatch.setattr(shard_work, "prepare_records", counted)
    with ThreadPoolExecutor(2) as pool:
        early = prefetch_shards(cfg, out, digest, pool) if prefetch else {}
        clients = build_clients(cfg, out)

        async def go() -> None:
            try:
                await run_shards(
                    cfg, out, clients, digest, RunResult(out), nap_settings(cfg), pool, early
                )
            finally:
                await clients.aclose()

        asyncio.run(go())
        clients.close()
    return prepared_in_loop, sorted(early)


def test_prefetched_shards_are_used_once_and_change_nothing(
    tmp_path: Path, server: FakeAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain_out, early_out = tmp_path / "plain", tmp_path / "early"
    in_loop_plain, none = run_all(plain_out, server, monkeypatch, prefetch=False)
    in_loop_early, early = run_all(early_out, server, monkeypatch, prefetch=True)
    cfg = load_config(early_out.parent / "early.yaml")
    todo, _ = pending_shards(early_out, cfg.output.shard_size, "a hash no shard has")
    every = sorted(p.shard_id for p in todo)
    assert none == [] and sorted(in_loop_plain) == every
    width = shard_width(cfg)
    assert 0 < width < len(every)  # some prefetched, some not
    assert early == sorted(p.shard_id for p in todo[:width])
    assert sorted(in_loop_early) == sorted(set(every) - set(early))  # no shard twice
    for table in ("candidates", "references", "judgements", "supervision"):
        key = ["trajectory_id", "step_index"]
        plain = pl.read_parquet(plain_out / table / "*.parquet").sort(key).select(key)
        with_early = pl.read_parquet(early_out / table / "*.parquet").sort(key).select(key)
        assert plain.height > 0 and plain.equals(with_early), table
