"""The Ray engine against the local engine on the same job, and where the difference goes.

The job: bench_run's 320-step job (the project's samples replicated, `--copies 40`: 80
trajectories, about 1,600 requests) against the scripted teacher/agent endpoint in a child
process (`--latency 0.2` s, real HTTP, `--concurrency 64` in flight). Measured in one run,
same machine, each engine in this process through `run_pipeline`:

- local: `execution.engine=local`, `--repeat` times (default 3);
- ray startup: `ray.init` of a local 2-CPU Ray (paid once per session, or never on a
  cluster that is already up), after the local runs: the local engine forks its workers,
  and a fork of a process that holds Ray's gRPC threads is not safe;
- ray run: `execution.engine=ray` on that Ray (actors started, clients built, shards
  mapped), `--repeat` times;
- coordinator round trip: one acquire + release over actor calls, the cost every request
  pays for cluster-wide limits, timed from the driver.

Repeat k of Ray is read against repeat k of local. Before them, `--warmup` runs (default 1)
of each engine are measured and kept apart as `cold` (the first local run pays the cold page
cache; the first Ray run, Ray's worker processes). Target (issue 31): Ray <= 1.5x local,
Ray already up, on the median repeat; the ratio with Ray's startup is reported beside it.

    python benchmarks/bench_ray.py [--copies 40] [--latency 0.2] [--concurrency 64]
        [--repeat 3] [--warmup 1]

Writes .bench/ray.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import BENCH, load_1m, write  # noqa: E402
from benchmarks.scripted import endpoint_process  # noqa: E402
from benchmarks.verdicts import Target, judge  # noqa: E402
from builder.config import load_config  # noqa: E402
from builder.run.driver import run_pipeline  # noqa: E402
from tests.run.nap_server import replicate_samples, run_config  # noqa: E402

ROUND_TRIPS = 200
TARGET = 1.5


def coordinator_round_trip() -> float:
    """Seconds per acquire + release through the coordinator actor."""
    import ray

    from builder.run.ray.actors import CoordinatorActor
    from builder.run.ray.coordinator import LimitSettings

    actor = CoordinatorActor.remote(LimitSettings(8, None, None, None, None, 60.0))
    ray.get(actor.stats.remote())  # started
    started = time.perf_counter()
    for _ in range(ROUND_TRIPS):
        lease, _ = ray.get(actor.acquire.remote("ep", 100))
        ray.get(actor.release.remote(lease, 100))
    seconds = (time.perf_counter() - started) / ROUND_TRIPS
    ray.kill(actor)
    return seconds


def run_once(engine: str, cfg_path: Path) -> dict[str, Any]:
    """One run of `engine` on an emptied output folder (no resume, no cached answer)."""
    cfg = load_config(cfg_path)
    out = Path(cfg.output.dir)
    shutil.rmtree(out, ignore_errors=True)
    started, started_epoch = time.perf_counter(), time.time()
    result = run_pipeline(cfg, config_path=cfg_path)
    wall = time.perf_counter() - started
    assert result.exit_code == 0, result.summary_text()
    figures = {
        "wall_s": wall,
        "ingest_s": result.stage_seconds["ingest"],
        "nap_s": result.stage_seconds["nap"],
        "requests": int(result.report["usage"]["total"]["requests"]),
        "eligible_steps": int(result.report["totals"]["eligible_steps"]),
        "shards": result.shards_total,
    }
    if engine == "ray":
        workers = (out / "_state" / "workers").glob("*.json")
        up = max(json.loads(p.read_text())["started"] for p in workers)
        figures["actors_up_s"] = up - started_epoch
    return figures


def start_ray() -> float:
    """Seconds to start a local 2-CPU Ray."""
    import ray

    started = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
    )  # no runtime_env: it would keep actors off the pre-started workers (run/ray/cluster.py)
    return time.perf_counter() - started


def stop_ray() -> None:
    import ray

    ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="runs kept apart, as `cold`")
    args = parser.parse_args()
    load_before = load_1m()
    work = BENCH / "ray"
    shutil.rmtree(work, ignore_errors=True)
    corpus = replicate_samples(work / "corpus", args.copies)
    extra = {  # bench_run's job: shards of 4 trajectories
        "limits": {"concurrency": args.concurrency},
        "output": {"shard_size": 4, "progress": False},
    }
    runs: dict[str, list[dict[str, Any]]] = {}
    with endpoint_process(args.latency) as base_url:
        for engine in ("local", "ray"):
            path = work / f"{engine}.yaml"
            execution = {"engine": engine, "actors": 2, "actor_cpus": 0.5}
            path.write_text(
                run_config(corpus, base_url, work / engine, execution=execution, **extra)
            )
            startup = start_ray() if engine == "ray" else 0.0
            runs[engine] = [run_once(engine, path) for _ in range(args.warmup + args.repeat)]
        trip = coordinator_round_trip()
        stop_ray()
    figures = summarise(runs, args, startup, trip)
    write("ray", figures, load_before)
    print(json.dumps(figures, indent=2))
    print(explanation(figures))


def summarise(
    runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace, startup: float, trip: float
) -> dict[str, Any]:
    """The median pair's figures, every repeat's ratio, the cold pair and the verdict."""
    cold = {engine: measured[: args.warmup] for engine, measured in runs.items()}
    local, ray_ = (runs[engine][args.warmup :] for engine in ("local", "ray"))
    ratios = [r["wall_s"] / lo["wall_s"] for r, lo in zip(ray_, local, strict=True)]
    k = sorted(range(len(ratios)), key=ratios.__getitem__)[(len(ratios) - 1) // 2]
    lo, r = local[k], ray_[k]
    overhead = r["wall_s"] - lo["wall_s"]
    target = Target(f"ray {lo['eligible_steps']} steps: ray / local", "<=", TARGET)
    return {
        "shards": r["shards"],
        "eligible_steps": r["eligible_steps"],
        "requests": r["requests"],
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "local_s": round(lo["wall_s"], 2),
        "ray_run_s": round(r["wall_s"], 2),
        "ray_startup_s": round(startup, 2),
        "ingest_s": {"local": round(lo["ingest_s"], 2), "ray": round(r["ingest_s"], 2)},
        "nap_s": {"local": round(lo["nap_s"], 2), "ray": round(r["nap_s"], 2)},
        "ray_actors_up_after_s": round(r["actors_up_s"], 2),
        "ray_over_local": round(ratios[k], 2),
        "ray_with_startup_over_local": round((r["wall_s"] + startup) / lo["wall_s"], 2),
        "repeats": {
            "ray_over_local": [round(x, 2) for x in ratios],
            "local_s": [round(m["wall_s"], 2) for m in local],
            "ray_run_s": [round(m["wall_s"], 2) for m in ray_],
        },
        "cold": {e: [round(m["wall_s"], 2) for m in measured] for e, measured in cold.items()},
        "coordinator_round_trip_ms": round(trip * 1000, 2),
        "coordinator_share_of_overhead": round(r["requests"] * trip / overhead, 2)
        if overhead > 0
        else None,
        "verdicts": [judge(target, [round(x, 3) for x in ratios])],
    }


def explanation(f: dict[str, Any]) -> str:
    """Where the difference goes, in words, with the median pair's figures."""
    v = f["verdicts"][0]
    return (
        f"ray engine: {f['ray_run_s']:.1f} s vs local {f['local_s']:.1f} s "
        f"(x{f['ray_over_local']}; {v['repeats_met']}/{v['repeats']} repeats <= {TARGET}x: "
        f"{'met' if v['met'] else 'NOT MET'}), plus {f['ray_startup_s']:.1f} s to start Ray. "
        f"Ingest: {f['ingest_s']['ray']:.1f} s on the shard actors vs "
        f"{f['ingest_s']['local']:.1f} s in the local worker pool (the actors were up "
        f"{f['ray_actors_up_after_s']:.1f} s into the run); NAP stage {f['nap_s']['ray']:.1f} s "
        f"vs {f['nap_s']['local']:.1f} s. A per-request coordinator round trip would cost "
        f"{f['coordinator_round_trip_ms']:.1f} ms; with concurrency as the only limit, slots are "
        f"leased in blocks ({f['requests']} requests). Starting Ray is what one machine pays."
    )


if __name__ == "__main__":
    main()
