"""The whole NAP core on real sample trajectories against the real local llama.cpp server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from builder.config import load_config
from builder.llm.local import ManagedLlamaServer
from builder.run.driver import run_pipeline
from tests.paths import SHARED

pytestmark = pytest.mark.llama

FILES = [
    SHARED / "mini-swe-agent/github_issue.traj.json",
    SHARED
    / "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json",
]


def test_core_on_two_real_trajectories_produces_joinable_tables(
    tmp_path: Path, llama_server: ManagedLlamaServer
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in FILES:
        shutil.copy(path, corpus / path.name)
    config = {
        "inputs": [{"path": str(corpus)}],
        # the llama_server fixture's server, reached through the OpenAI-compatible provider
        "teacher": {
            "provider": "openai",
            "model": llama_server.model,
            "base_url": llama_server.base_url,
            "samples": 2,
            "max_tokens": 48,
        },
        "agent": {
            "provider": "openai",
            "model": llama_server.model,
            "base_url": llama_server.base_url,
            "max_tokens": 48,
            "format_retries": 0,
        },
        # logged references: the judgements do not depend on the tiny model's format luck
        "references": {"mode": "logged"},
        "gate": {"top_k": 1},
        "selection": {"max_per_step": 1, "exhaustive": True},
        "limits": {"concurrency": 1, "steps_in_flight": 1, "timeout_s": 300},
        "output": {"dir": str(tmp_path / "out"), "progress": False},
    }
    path = tmp_path / "llama.yaml"
    path.write_text(json.dumps(config))
    result = run_pipeline(load_config(path), config_path=path)
    assert result.exit_code == 0 and result.shards_failed == 0

    out = tmp_path / "out"
    steps = pl.read_parquet(out / "steps" / "*.parquet").filter(pl.col("eligible"))
    candidates = pl.read_parquet(out / "candidates" / "*.parquet")
    references = pl.read_parquet(out / "references" / "*.parquet")
    judgements = pl.read_parquet(out / "judgements" / "*.parquet")
    assert steps.height == 2  # one eligible step per file (see tests/ingest/test_ingest.py)
    assert candidates.height == 2 * 2 and references.height == 2 and judgements.height >= 1
    step_keys = steps.select("trajectory_id", "step_index")
    for table in (candidates, references, judgements):
        joined = table.join(step_keys, on=["trajectory_id", "step_index"], how="anti")
        assert joined.height == 0  # every row belongs to an eligible step
    controls = judgements.filter(pl.col("is_control"))
    assert controls.height == steps.height  # one control per eligible step
    judgements = judgements.filter(~pl.col("is_control"))
    judged = judgements.join(
        candidates, on=["trajectory_id", "step_index", "candidate_index"], how="inner"
    )
    assert judged.height == judgements.height  # every judgement names a real candidate
    assert (judged["valid"]).all()
    assert (references["mode"] == "logged").all() and references["action"].is_not_null().all()
    assert judgements["reply"].str.len_chars().min() > 0  # the model really answered
    assert candidates.filter(pl.col("source") == "teacher")["reply"].is_not_null().all()
    report = json.loads((out / "report.json").read_text())
    assert report["totals"]["eligible_steps"] == 2


def test_early_exit_against_the_real_model_gives_the_exhaustive_supervision(
    llama_server: ManagedLlamaServer, tmp_path: Path
) -> None:
    """Early exit stops judging once `max_per_step` candidates passed. Against the real model
    (out of process) it must select what judging every candidate selects, with fewer or equal
    requests. The model is not bit-stable between identical greedy requests on a busy shared
    CPU (measured: two replies to one request differed), so both runs share a request cache,
    as a resumed run would: the early run asks the model, the exhaustive run reuses those
    replies and asks the model only for the candidates early exit skipped."""
    import asyncio
    import dataclasses

    from builder.llm.cache import RequestCache
    from builder.llm.client import LLMClient
    from builder.llm.openai_provider import OpenAIProvider
    from builder.nap.step import NapSettings, StepResult, process_step
    from builder.similarity.compare import get_similarity
    from tests.nap.nap_fixtures import first_job, scripted

    settings = NapSettings(
        teacher_samples=5,
        reference_mode="logged",
        similarity="semantic",
        threshold=0.0,  # any parsed action passes: the tiny model rarely repeats the logged one
        max_per_step=1,
        agent_max_tokens=32,
        format_retries=0,
        seed=3,
    )
    cache = RequestCache(tmp_path / "cache.sqlite")

    async def one(exhaustive: bool) -> StepResult:
        provider = OpenAIProvider(
            llama_server.model, base_url=llama_server.base_url, api_key_env="NAP_TEST_NO_KEY"
        )
        agent = LLMClient(provider, cache=cache)
        try:
            result = await process_step(
                first_job(),
                LLMClient(scripted()),  # deterministic candidates; the agent is the real model
                agent,
                dataclasses.replace(settings, exhaustive=exhaustive),
                get_similarity("semantic"),
            )
        finally:
            await agent.aclose()
        return result

    early = asyncio.run(one(False))
    full = asyncio.run(one(True))
    assert full.judge_requests == full.judge_requests_exhaustive == 3  # valid, unique candidates
    assert early.judge_requests <= full.judge_requests
    assert early.supervision == full.supervision

    def rows(judgements: list[Any], control: bool) -> list[tuple[Any, ...]]:
        return [
            (j.candidate_index, j.judge_order, j.reply, j.passed)
            for j in judgements
            if j.is_control == control
        ]

    assert rows(early.judgements, True) == rows(full.judgements, True)  # the same control
    view = rows(full.judgements, False)
    judged_early = rows(early.judgements, False)
    assert judged_early == view[: len(judged_early)]
    assert all(j.reply for j in full.judgements)  # the model really answered
    passed = [order for _, order, _, ok in view if ok]
    if passed:  # early exit stops right after the first pass
        assert len(judged_early) == passed[0] + 1
        assert early.judge_requests == passed[0] + 1
    else:
        assert len(judged_early) == len(view)
