"""The scale bench of issue 31: a corpus with the shape of the 500-trajectory real corpus
(`benchmarks.scale_corpus`: 500 trajectories, 20k steps, 5k eligible) run whole against the
scripted endpoint, with the same floor as bench_run, and the run's memory as the job grows.

The run: `pipelines/openai.yaml` moved onto one scripted server for teacher and agent (the
overrides of bench_side_by_side, `--concurrency` in flight, 64 by default), timed from spawn
to exit. With the scripted teacher's four distinct candidates a step makes about 6 requests,
so the job is about 30k requests rather than the real corpus's 40k.
The floor: the recorded bodies, as sent, replayed by a bare aiohttp client at the same
concurrency against the same server (`benchmarks.scripted`).
Memory: the resident memory of the run's whole process tree (the parent and its forked
workers, summed from /proc every 0.2 s: shared pages count once per process, the safe side)
beside the eligible steps finished (the shard markers under OUT/_state/shards), giving the
peak and the RSS at 1k, 2k and 5k eligible steps (a fifth, two fifths and all of any job),
each the peak of the samples on the way there from the previous one
(`tree_memory.window_peaks`: one sample can fall just after a collection, and the samples at
the last step see the workers exit).

Targets: whole run <= 1.10x the floor; peak RSS < 1.5 GiB; flat memory, read as RSS at the
last checkpoint <= 1.25x RSS at the first. Why 1.25: at 1k steps the tree already holds all
that a run needs at any size (interpreter, imports, the tokenizer, worker processes, clients,
the requests in flight), so what is added by 5k is growth with the job. The allocator keeps
freed arenas and a few tens of MiB of drift is not a leak, but a quarter of the base (over
100 MiB here) is what keeping a step's records (tens of KiB each: candidates, references,
judgements) for every step would add.
The targets are judged on the median over `--repeat` runs (default 1: a run is minutes).
`--small`: 20 trajectories at 0.05 s latency in shards of 2 (so that each window has
samples), an end-to-end check of the bench itself, not a measurement.

    python benchmarks/bench_scale.py [--trajectories 500] [--repeat 1] [--latency 0.2]
        [--concurrency 64] [--small]

Writes .bench/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_side_by_side import DUMMY_KEYS, OPENAI, openai_overrides  # noqa: E402
from benchmarks.machine import BENCH, load_1m, write  # noqa: E402
from benchmarks.scale_corpus import LONG, write_corpus  # noqa: E402
from benchmarks.scripted import (  # noqa: E402
    control,
    endpoint_process,
    recorded,
    replay,
    whole_run,
)
from benchmarks.tree_memory import RssSampler, Sample, window_peaks  # noqa: E402
from benchmarks.verdicts import Target, judge  # noqa: E402

GIB = 2**30
TARGET_RATIO = 1.10
TARGET_PEAK_GIB = 1.5
TARGET_FLAT = 1.25
CHECKPOINTS = (0.2, 0.4, 1.0)  # of the job's eligible steps: 1k, 2k and 5k of 5k


def shard_progress(out: Path) -> Callable[[], int]:
    """Eligible steps finished so far: the sum over the shard markers (each written once,
    atomically, when its shard is done; read once)."""
    seen: dict[str, int] = {}

    def done() -> int:
        for marker in (out / "_state" / "shards").glob("*.json"):
            if marker.name not in seen:
                try:
                    seen[marker.name] = int(json.loads(marker.read_text())["eligible_steps"])
                except (OSError, ValueError, KeyError):
                    continue
        return sum(seen.values())

    return done


def memory(samples: list[Sample], eligible: int) -> dict[str, Any]:
    """Peak tree RSS (MiB) on the way to each checkpoint, and the flatness ratio."""
    checkpoints = [round(eligible * share) for share in CHECKPOINTS]
    peaks = window_peaks(samples, checkpoints)
    first, last = peaks[checkpoints[0]], peaks[checkpoints[-1]]
    return {
        "rss_by_steps_mib": {
            str(k): None if v is None else round(v / 2**20, 1) for k, v in peaks.items()
        },
        "flat_ratio": round(last / first, 3) if first and last else None,
        "samples": len(samples),
    }


def measure(
    base_url: str, corpus: Path, work: Path, concurrency: int, extra: list[str]
) -> dict[str, Any]:
    """One repeat: the whole run with its memory sampled, then its floor."""
    out = work / "out"
    overrides = [
        *openai_overrides(corpus, out, base_url, base_url),
        f"limits.concurrency={concurrency}",
        *extra,
    ]
    control(base_url, "reset")
    sampler = RssSampler(every=0.2, progress=shard_progress(out))
    wall, cpu = whole_run(OPENAI, out, overrides, env=DUMMY_KEYS, watch=sampler.watching)
    payloads = recorded(base_url)
    control(base_url, "reset")
    floor = asyncio.run(replay(base_url, payloads, concurrency))
    control(base_url, "reset")
    totals = json.loads((out / "report.json").read_text())["totals"]
    eligible = int(totals["eligible_steps"])
    return {
        "trajectories": totals["trajectories"],
        "steps": totals["steps"],
        "eligible_steps": eligible,
        "requests": len(payloads),
        "request_mib": round(sum(map(len, payloads)) / 2**20, 1),
        "run_wall_s": round(wall, 2),
        "run_cpu_s": round(cpu, 2),
        "floor_s": round(floor, 2),
        "run_ratio_to_floor": round(wall / floor, 3),
        "peak_rss_gib": round(sampler.peak_total / GIB, 3),
        "peak_rss_single_process_mib": round(sampler.peak_single / 2**20, 1),
        **memory(sampler.samples, eligible),
    }


def verdicts(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The three targets over the repeats (a run that never reached a checkpoint's sample
    has no flatness ratio, and fails that target)."""
    steps = runs[0]["eligible_steps"]
    first, last = round(steps * CHECKPOINTS[0]), steps
    ratio = Target(f"scale {steps} steps: whole run / floor", "<=", TARGET_RATIO)
    peak = Target(f"scale {steps} steps: peak RSS of the run", "<", TARGET_PEAK_GIB, "GiB")
    flat = Target(f"scale: RSS at {last} / at {first} steps", "<=", TARGET_FLAT)
    return [
        judge(ratio, [r["run_ratio_to_floor"] for r in runs]),
        judge(peak, [r["peak_rss_gib"] for r in runs]),
        judge(flat, [r["flat_ratio"] or float("inf") for r in runs]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--small", action="store_true", help="20 trajectories, 0.05 s latency")
    args = parser.parse_args()
    extra = []
    if args.small:
        args.trajectories, args.latency, extra = 20, 0.05, ["output.shard_size=2"]
    load_before = load_1m()
    work = BENCH / "scale"
    shutil.rmtree(work, ignore_errors=True)
    corpus = write_corpus(work / "corpus", args.trajectories)
    with endpoint_process(args.latency) as base_url:
        runs = [
            measure(base_url, corpus, work, args.concurrency, extra) for _ in range(args.repeat)
        ]
    if runs[0]["eligible_steps"] != LONG * args.trajectories:  # not the job the targets are for
        raise SystemExit(f"{runs[0]['eligible_steps']} eligible steps, expected {LONG} a file")
    figures: dict[str, Any] = {
        "config": str(OPENAI.relative_to(ROOT)),
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "overrides": extra,
        "repeats": runs,
        "verdicts": verdicts(runs),
    }
    write("scale", figures, load_before)
    print(json.dumps(figures, indent=2))
    for v in figures["verdicts"]:
        print(
            f"{v['target']}: median {v['median']:.3g} ({v['repeats_met']}/{v['repeats']} "
            f"repeats {v['op']} {v['limit']}): {'met' if v['met'] else 'NOT MET'}"
        )


if __name__ == "__main__":
    main()
