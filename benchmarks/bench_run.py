"""Whole-run speed against OpenAI-compatible endpoints with a fixed latency.

A scripted teacher/agent server on 127.0.0.1 answers every request after `--latency` seconds.
The run goes through the real orchestration (shards, NAP core, LLM client with its limits) at
`limits.concurrency` in flight. The bound set by the endpoints is
max(requests x latency / concurrency, the longest per-step chain of dependent requests x latency).
The same steps are then processed by a straightforward sequential-per-step baseline (one step
at a time, its own requests awaited in order) with a fresh cache.

    python benchmarks/bench_run.py [--copies 40] [--latency 0.2] [--concurrency 64]

Writes .bench/run.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.actions.similarity import get_similarity  # noqa: E402
from builder.config import load_config  # noqa: E402
from builder.formats import get_adapter  # noqa: E402
from builder.llm.client import LLMClient  # noqa: E402
from builder.llm.limits import EndpointLimits  # noqa: E402
from builder.llm.openai_provider import OpenAIProvider  # noqa: E402
from builder.nap import StepJob, process_step  # noqa: E402
from builder.runner.run import nap_settings, run_pipeline  # noqa: E402
from builder.runner.shards import load_shard, plan_shards  # noqa: E402
from tests.runner.nap_server import replicate_samples, run_config  # noqa: E402

BENCH = ROOT / ".bench"


def chain_length(judgements_per_step: list[int], max_per_step: int) -> int:
    """Dependent request rounds of the longest step: teacher / references, then judge waves."""
    return 1 + max((max(1, -(-j // max_per_step)) for j in judgements_per_step), default=0)


async def sequential(out: Path, cfg_path: Path, base_url: str) -> tuple[float, int, int]:
    """One step at a time; within a step each request waits for the previous one."""
    cfg = load_config(cfg_path)
    settings = dataclasses.replace(nap_settings(cfg))
    provider = OpenAIProvider("fake", base_url=base_url)
    client = LLMClient(provider, limits=EndpointLimits(max_in_flight=1))
    similarity = get_similarity(settings.similarity)
    steps = 0
    started = time.perf_counter()
    for plan in plan_shards(out, cfg.output.shard_size):
        trajectories, shard_steps = load_shard(out, plan)
        for step in shard_steps:
            traj = trajectories[step.trajectory_id]
            job = StepJob(traj, step, get_adapter(traj.source_format))
            await process_step(job, client, client, settings, similarity)
            steps += 1
    return time.perf_counter() - started, steps, client.usage.total().requests


@contextlib.contextmanager
def endpoint_process(latency: float) -> Iterator[str]:
    """The scripted endpoint in a child process, so it shares no GIL with the run."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.runner.nap_server", "--latency", str(latency)],
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    work = BENCH / "run"
    shutil.rmtree(work, ignore_errors=True)
    corpus = replicate_samples(work / "corpus", args.copies)
    out = work / "out"
    with endpoint_process(args.latency) as base_url:
        cfg_path = work / "bench.yaml"
        cfg_path.write_text(
            run_config(
                corpus,
                base_url,
                out,
                limits={"concurrency": args.concurrency},
                output={"dir": str(out), "shard_size": 4, "progress": False},
            )
        )
        cfg = load_config(cfg_path)
        started = time.perf_counter()
        result = run_pipeline(cfg, config_path=cfg_path)
        wall = time.perf_counter() - started
        report = result.report
        requests = int(report["usage"]["total"]["requests"])
        import polars as pl

        judgements = pl.read_parquet(out / "judgements" / "*.parquet").filter(~pl.col("is_control"))
        per_step = judgements.group_by("trajectory_id", "step_index").len()["len"].to_list()
        chain = chain_length(per_step, cfg.selection.max_per_step)
        bound = max(requests * args.latency / args.concurrency, chain * args.latency)
        figures = {
            "eligible_steps": report["totals"]["eligible_steps"],
            "requests": requests,
            "latency_s": args.latency,
            "concurrency": args.concurrency,
            "bound_s": round(bound, 2),
            "run_wall_s": round(wall, 2),
            "nap_stages_s": round(result.stage_seconds["nap"], 2),
            "ingest_s": round(result.stage_seconds["ingest"], 2),
            "report_and_plots_s": round(result.stage_seconds["report"], 2),
            "nap_ratio_to_bound": round(result.stage_seconds["nap"] / bound, 2),
            "wall_ratio_to_bound": round(wall / bound, 2),
        }
        if not args.skip_baseline:
            seconds, steps, sent = asyncio.run(sequential(out, cfg_path, base_url))
            figures |= {
                "sequential_baseline_s": round(seconds, 2),
                "sequential_requests": sent,
                "sequential_steps": steps,
                "speedup_vs_sequential": round(seconds / result.stage_seconds["nap"], 1),
            }
    BENCH.mkdir(exist_ok=True)
    (BENCH / "run.json").write_text(json.dumps(figures, indent=2))
    for key, value in figures.items():
        print(f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
