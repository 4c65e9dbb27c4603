"""Whole-run speed against OpenAI-compatible endpoints with a fixed latency, against a floor
measured in the same run.

A scripted teacher/agent server (asyncio, its own process) on 127.0.0.1 answers every request
after `--latency` seconds. For each transport (`direct`, the default; the OpenAI SDK on
aiohttp and on httpx):
- the whole run: `nap-builder run` as a subprocess, timed from process start to its exit
  (ingest, NAP stages, report and plots), at `limits.concurrency` in flight;
- the floor: the very requests that run sent (recorded by the server, byte for byte),
  replayed by a bare async HTTP client (aiohttp, no SDK) at the same concurrency against the
  same server (`benchmarks.scripted`);
- in flight: requests being served at the server, as a fraction of the concurrency limit,
  averaged two ways. `in_flight_fraction`: over the whole span from the first request's
  arrival to the last answer. `saturated_in_flight_fraction` (the target's figure): over
  the part of that span in which the job still had at least `concurrency` requests
  unfinished (`tests.llm.servers.saturation`). The rest, `drain_s`, is the job's end: once
  fewer requests than the limit remain, no client can fill it, and the whole-span mean
  then depends on the job's size (1,608 requests at 64 end on a wave of 8, which caps the
  whole-span mean near 96.6% even for a client that never lets a slot idle: the floor's
  own is ~95.1-95.8% here). Both are given for the run and for the floor;
- the floor as a program (`floor_process_s`): the same replay in a fresh Python process timed
  from spawn to exit, as the run is. The target is read against the in-process floor, the
  stricter of the two; the program's ratio is reported beside it.
Targets (issue 31): whole run <= 1.25x the floor in at least 4 of 5 repeats; >= 95% of the
concurrency limit in flight while the job can fill it, on the median repeat. `verdicts` (read
by `benchmarks/verdicts.py`) judges each, per job, over the repeats.
Repeats: two runs of the same job differ by up to ~0.4 s here (a shared two-core machine), so
the first transport is measured `--repeat` times (default 5), each time with its own floor,
and the repeat with the median ratio is shown, with every repeat's figures beside it. Before
them, `--warmup` runs (default 1) of the first job are measured the same way but kept apart,
as `cold`: the first run after the corpus is written and the server started pays for a cold
page cache, the tokenizer's user-cache entry and the server's first connections, which is the
machine's first run, not the run's; its figures are shown beside the others.
Job sizes: `--copies 40,120` measures two jobs: 80 trajectories, 320 eligible steps, about
1,600 requests (a floor of about 5.3 s at 0.2 s and 64 in flight), and 240 trajectories, 960
steps, about 4,800 requests (a floor of about 16 s). The fixed cost of a run (Python start and
imports ~0.9 s, of which the ingest now overlaps ~0.4 s; the report and exit ~0.15 s) weighs
on the small job's ratio; a real paid run is minutes to hours long, as the larger job is
closer to.
`run_cpu_ratio_to_floor` (the run's CPU seconds over the floor's wall seconds) is the
ratio the run could not beat on one core even on an idle machine: compare it when load is high.
`--sequential` adds the old one-step-at-a-time baseline (slow: requests x latency).

    python benchmarks/bench_run.py [--copies 40,120] [--latency 0.2] [--concurrency 64]

Writes .bench/run.json.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import BENCH, load_1m, write  # noqa: E402
from benchmarks.scripted import (  # noqa: E402
    control,
    endpoint_process,
    recorded,
    replay,
    replay_process,
    whole_run,
)
from benchmarks.verdicts import Target, judge, shown  # noqa: E402
from builder.config import load_config  # noqa: E402
from builder.ingest.formats import get_adapter  # noqa: E402
from builder.llm.client import LLMClient  # noqa: E402
from builder.llm.limits import EndpointLimits  # noqa: E402
from builder.llm.openai_provider import OpenAIProvider  # noqa: E402
from builder.nap.from_config import nap_settings  # noqa: E402
from builder.nap.step import StepJob, process_step  # noqa: E402
from builder.run.shards import load_shard, plan_shards  # noqa: E402
from builder.similarity.compare import get_similarity  # noqa: E402
from tests.run.nap_server import replicate_samples, run_config  # noqa: E402


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


def measure(
    base_url: str, corpus: Path, work: Path, args: argparse.Namespace, transport: str
) -> dict[str, Any]:
    out = work / f"out-{corpus.name}-{transport}"
    cfg_path = work / f"bench-{corpus.name}-{transport}.yaml"
    endpoint = {"base_url": base_url, "transport": transport}
    cfg_path.write_text(
        run_config(
            corpus,
            base_url,
            out,
            limits={"concurrency": args.concurrency},
            output={"dir": str(out), "shard_size": 4, "progress": False},
            teacher=endpoint,
            agent=endpoint,
        )
    )
    stats = f"stats?concurrency={args.concurrency}"
    control(base_url, "reset")
    spawned: list[float] = []
    wall, cpu = whole_run(cfg_path, out, spawned=spawned)
    served = control(base_url, stats)
    bodies = recorded(base_url)
    control(base_url, "reset")
    floor = asyncio.run(replay(base_url, bodies, args.concurrency))
    floor_served = control(base_url, stats)
    control(base_url, "reset")
    floor_process = replay_process(base_url, bodies, args.concurrency, work)
    control(base_url, "reset")
    report = json.loads((out / "report.json").read_text())
    stages = report["run"]["stage_seconds"]
    return {
        "requests": len(bodies),
        "eligible_steps": report["totals"]["eligible_steps"],
        "run_wall_s": round(wall, 2),
        "run_cpu_s": round(cpu, 2),
        "cpu_ms_per_request": round(1000 * cpu / max(1, len(bodies)), 2),
        "nap_stages_s": round(stages["nap"], 2),
        "ingest_s": round(stages["ingest"], 2),
        "start_report_plots_s": round(wall - stages["nap"] - stages["ingest"], 2),
        # the start-up on the critical path: spawn to the first request at the server, and
        # the end: the last answer to the process's exit (report, plots, worker exit)
        "first_request_after_s": round(served["first_arrival"] - spawned[0], 3),
        "exit_after_last_answer_s": round(spawned[0] + wall - served["last_answer"], 3),
        "floor_s": round(floor, 2),
        "run_ratio_to_floor": round(wall / floor, 2),
        "floor_process_s": round(floor_process, 2),
        "run_ratio_to_process_floor": round(wall / floor_process, 2),
        # a lower bound on the ratio that load cannot move: the run's CPU seconds alone, as if
        # it had one core to itself and waited for nothing
        "run_cpu_ratio_to_floor": round(cpu / floor, 2),
        "nap_ratio_to_floor": round(stages["nap"] / floor, 2),
        "in_flight_fraction": round(served["mean_in_flight"] / args.concurrency, 3),
        "floor_in_flight_fraction": round(floor_served["mean_in_flight"] / args.concurrency, 3),
        "saturated_in_flight_fraction": round(served["saturated_in_flight"], 3),
        "floor_saturated_in_flight_fraction": round(floor_served["saturated_in_flight"], 3),
        "drain_s": round(served["drain_s"], 2),
        "floor_drain_s": round(floor_served["drain_s"], 2),
        "peak_in_flight": served["peak_in_flight"],
        "server_span_s": round(served["span_s"], 2),
        "in_flight_deciles": served["deciles"],
        "floor_in_flight_deciles": floor_served["deciles"],
    }


HEADLINE = (
    "run_ratio_to_floor",
    "first_request_after_s",
    "in_flight_fraction",
    "saturated_in_flight_fraction",
    "floor_in_flight_fraction",
    "run_ratio_to_process_floor",
)
# issue 31: the 320-step job's whole run <= 1.25x its floor in at least 4 of 5 repeats
# (every job size is held to it); >= 95% of the limit in flight while the job can fill it
TARGET_RATIO = 1.25
RATIO_RULE = (4, 5)
TARGET_IN_FLIGHT = 0.95


def repeated(
    measurements: list[dict[str, Any]], headline: tuple[str, ...] = HEADLINE
) -> dict[str, Any]:
    """The measurement with the median whole-run ratio, and every repeat's headline figures
    (each repeat has its own floor: run and floor share the machine's state of the moment)."""
    ordered = sorted(measurements, key=lambda m: m["run_ratio_to_floor"])
    median = dict(ordered[(len(ordered) - 1) // 2])
    if len(measurements) > 1:
        median["repeats"] = {key: [m[key] for m in measurements] for key in headline}
    return median


def verdict(measurements: list[dict[str, Any]], steps: int) -> list[dict[str, Any]]:
    """Each target of the job judged over its repeats (`benchmarks.verdicts`)."""
    ratio = Target(f"run {steps} steps: whole run / floor", "<=", TARGET_RATIO, of=RATIO_RULE)
    flight = Target(f"run {steps} steps: in flight while fillable", ">=", TARGET_IN_FLIGHT, "%")
    return [
        judge(ratio, [m["run_ratio_to_floor"] for m in measurements]),
        judge(flight, [m["saturated_in_flight_fraction"] for m in measurements]),
    ]


def summary_line(verdicts: list[dict[str, Any]], median: dict[str, Any]) -> str:
    """One line per job: each target, its median, how many repeats met it, and the whole-span
    in-flight figure it is read beside."""
    judged = "; ".join(
        f"{v['target'].split(': ', 1)[1]} {shown(v['median'], v['unit'])} "
        f"({v['repeats_met']}/{v['repeats']} repeats {v['op']} {shown(v['limit'], v['unit'])}, "
        f"judged on {v['rule']}: {'met' if v['met'] else 'NOT MET'})"
        for v in verdicts
    )
    return (
        f"{median['eligible_steps']} steps, {median['requests']} requests: {judged}; "
        f"in flight over the whole span {median['in_flight_fraction']:.1%} "
        f"(floor {median['floor_in_flight_fraction']:.1%})"
    )


STARTUP_PIECES = {
    "interpreter": "pass",
    "cli_and_run_driver_imports": "import builder.cli.app, builder.run.driver",
    "nap_stack_imports": "import builder.llm.factory, builder.nap.step, builder.run.schedule",
}


def startup_pieces(repeats: int = 5) -> dict[str, float]:
    """Median seconds of a fresh interpreter that does only each piece of a run's start:
    the interpreter itself, the imports before the workers fork, and the NAP stack the parent
    imports while the workers ingest (each includes the interpreter's own start)."""
    pieces = {}
    for name, code in STARTUP_PIECES.items():
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
            times.append(time.perf_counter() - started)
        pieces[f"{name}_s"] = round(statistics.median(times), 3)
    return pieces


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", default="40,120", help="job sizes (comma-separated)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--transports", default="direct,aiohttp,httpx")
    parser.add_argument("--sequential", action="store_true", help="add the sequential baseline")
    parser.add_argument(
        "--repeat", type=int, default=5, help="measurements of the first transport (median)"
    )
    parser.add_argument("--warmup", type=int, default=1, help="runs kept apart, as `cold`")
    args = parser.parse_args()
    work = BENCH / "run"
    shutil.rmtree(work, ignore_errors=True)
    sizes = [int(c) for c in args.copies.split(",")]
    load_before = load_1m()
    figures: dict[str, Any] = {"latency_s": args.latency, "concurrency": args.concurrency}
    judged: dict[int, list[dict[str, Any]]] = {}
    with endpoint_process(args.latency) as base_url:
        for copies in sizes:
            corpus = replicate_samples(work / f"corpus{copies}", copies)
            job = figures[f"copies_{copies}"] = {}
            first = args.transports.split(",")[0]
            if copies == sizes[0] and args.warmup:
                cold = [measure(base_url, corpus, work, args, first) for _ in range(args.warmup)]
                job["cold"] = {key: [m[key] for m in cold] for key in HEADLINE}
            for k, transport in enumerate(args.transports.split(",")):
                repeats = args.repeat if k == 0 else 1
                runs = [measure(base_url, corpus, work, args, transport) for _ in range(repeats)]
                job[transport] = repeated(runs)
                if k == 0:
                    judged[copies] = verdict(runs, runs[0]["eligible_steps"])
        if args.sequential:
            first = args.transports.split(",")[0]
            out = work / f"out-corpus{sizes[0]}-{first}"
            cfg_path = work / f"bench-corpus{sizes[0]}-{first}.yaml"
            seconds, steps, sent = asyncio.run(sequential(out, cfg_path, base_url))
            figures["sequential"] = {"seconds": round(seconds, 2), "steps": steps, "sent": sent}
    figures["startup_pieces"] = startup_pieces()
    figures["verdicts"] = [v for copies in sizes for v in judged[copies]]
    write("run", figures, load_before)
    print(json.dumps(figures, indent=2))
    for copies in sizes:
        job = figures[f"copies_{copies}"]
        print(summary_line(judged[copies], job[args.transports.split(",")[0]]))


if __name__ == "__main__":
    main()
