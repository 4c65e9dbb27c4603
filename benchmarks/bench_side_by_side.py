"""The side-by-side job of issue 31: `pipelines/openai.yaml` as shipped, its teacher and its
agent each pointed at a scripted server of its own, against a bare replay of the same
requests on both servers at once.

The job: the project's samples replicated (`--copies 25`: 50 trajectories, 200 eligible
steps), each copy's number inside its task description (`distinct_copies`: otherwise every
copy asks the teacher the same question and the request cache answers all but the first, as
in bench_run's job, and the teacher's server would sit idle), run as `nap-builder run
pipelines/openai.yaml --set ...` in a fresh process, timed from spawn to exit. The
overrides only move the job onto the scripted servers: the inputs, the output folder,
`teacher.base_url`, `agent.base_url`, and the API key variable set to a dummy in the run's
environment. Everything else is the shipped config (8 teacher samples, 8 references, the
agree gate, 32 in flight, a budget), except its account limits: `requests_per_minute` and
`tokens_per_minute` are lifted, because they are the provider account's pacing (3,000
requests a minute would make this a bench of the rate limiter, not of the run) and a bare
replay honours none; and the budget is raised to $1M, so that every request is still
reserved and settled against one but the scale job's ~$20 of list-price tokens do not stop
it (the shipped $20 did, at 4,856 of 5,000 steps).

The floor: each server's recorded bodies, as the run sent them, replayed by a bare aiohttp
client against the same server, both servers at once, each at the config's concurrency: the
run's limits are per endpoint (`builder.llm.factory.build_clients` keys them by provider and
base URL), so two endpoints carry up to twice the limit in flight, and so does the floor.

Target: whole run <= 1.35x the floor on the median of `--repeat` repeats (default 5), each
with its own floor; `--warmup` runs (default 1) before them are measured the same way and
kept apart as `cold` (cold page cache, the servers' first connections). With the scripted
servers the job is about 1,200 requests, not the 1,600 the issue counts: a teacher request
and a reference request per step (8 samples each, asked as `n`), and four candidates judged,
as the scripted teacher's menu has four distinct entries.

    python benchmarks/bench_side_by_side.py [--copies 25] [--latency 0.2] [--repeat 5]

Writes .bench/side_by_side.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_run import repeated  # noqa: E402
from benchmarks.machine import BENCH, load_1m, write  # noqa: E402
from benchmarks.scripted import (  # noqa: E402
    control,
    endpoint_process,
    recorded,
    replay,
    whole_run,
)
from benchmarks.verdicts import Target, judge  # noqa: E402
from builder.config import load_config  # noqa: E402
from tests.run.nap_server import replicate_samples  # noqa: E402

OPENAI = ROOT / "pipelines" / "openai.yaml"
TARGET = 1.35
DUMMY_KEYS = {"OPENAI_API_KEY": "bench-dummy-key"}  # the scripted servers check no key
END_TASK = "</pr_description>"
STEPS_PER_COPY = 8  # eligible steps of one copy of the samples
HEADLINE = ("run_ratio_to_floor", "run_wall_s", "floor_s", "run_cpu_s")


def distinct_copies(dest: Path, copies: int) -> Path:
    """`replicate_samples`, with each copy's number moved inside its task description (the
    text the teacher is shown), so that no two steps make the same teacher request."""
    replicate_samples(dest, copies)
    for k in range(copies):
        path = dest / f"mini-{k}.traj.json"
        path.write_text(path.read_text().replace(END_TASK, f"(copy {k}) {END_TASK}", 1))
    lines = (dest / "chat.jsonl").read_text().splitlines()
    marked = [line.replace(END_TASK, f"(copy {k}) {END_TASK}", 1) for k, line in enumerate(lines)]
    (dest / "chat.jsonl").write_text("\n".join(marked) + "\n")
    return dest


def openai_overrides(corpus: Path, out: Path, teacher_url: str, agent_url: str) -> list[str]:
    """`--set` values that move `pipelines/openai.yaml` onto scripted servers (see above)."""
    return [
        f"inputs={json.dumps([{'path': str(corpus)}])}",  # JSON is YAML
        f"output.dir={json.dumps(str(out))}",
        f"teacher.base_url={teacher_url}",
        f"agent.base_url={agent_url}",
        "limits.requests_per_minute=null",
        "limits.tokens_per_minute=null",
        "limits.budget_usd=1000000",
    ]


async def replay_both(
    recorded_by_url: dict[str, list[bytes]], concurrency: int
) -> tuple[float, dict[str, float]]:
    """Every server's bodies replayed at once, each at `concurrency`: the span of the whole,
    and each server's own."""
    started = time.perf_counter()
    spans = await asyncio.gather(
        *(replay(url, payloads, concurrency) for url, payloads in recorded_by_url.items())
    )
    return time.perf_counter() - started, dict(zip(recorded_by_url, spans, strict=True))


def in_flight(urls: dict[str, str], concurrency: int) -> dict[str, float]:
    """Mean requests in flight at each server over its span, as a fraction of the limit."""
    return {
        role: round(control(url, "stats")["mean_in_flight"] / concurrency, 3)
        for role, url in urls.items()
    }


def measure(urls: dict[str, str], corpus: Path, work: Path, concurrency: int) -> dict[str, Any]:
    """One repeat: the whole run, then its floor, on the same two servers."""
    out = work / "out"
    for url in urls.values():
        control(url, "reset")
    overrides = openai_overrides(corpus, out, urls["teacher"], urls["agent"])
    wall, cpu = whole_run(OPENAI, out, overrides, env=DUMMY_KEYS)
    run_in_flight = in_flight(urls, concurrency)
    bodies = {url: recorded(url) for url in urls.values()}
    for url in urls.values():
        control(url, "reset")
    floor, spans = asyncio.run(replay_both(bodies, concurrency))
    floor_in_flight = in_flight(urls, concurrency)
    report = json.loads((out / "report.json").read_text())
    return {
        "eligible_steps": report["totals"]["eligible_steps"],
        "requests": {role: len(bodies[url]) for role, url in urls.items()},
        "run_wall_s": round(wall, 2),
        "run_cpu_s": round(cpu, 2),
        "floor_s": round(floor, 2),
        "floor_by_server_s": {role: round(spans[url], 2) for role, url in urls.items()},
        "run_ratio_to_floor": round(wall / floor, 2),
        "run_cpu_ratio_to_floor": round(cpu / floor, 2),
        "in_flight_fraction": run_in_flight,
        "floor_in_flight_fraction": floor_in_flight,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--copies", type=int, default=25, help=f"{STEPS_PER_COPY} eligible steps per copy"
    )
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="runs kept apart, as `cold`")
    args = parser.parse_args()
    load_before = load_1m()
    work = BENCH / "side_by_side"
    shutil.rmtree(work, ignore_errors=True)
    corpus = distinct_copies(work / "corpus", args.copies)
    concurrency = load_config(OPENAI).limits.concurrency
    with endpoint_process(args.latency) as teacher, endpoint_process(args.latency) as agent:
        urls = {"teacher": teacher, "agent": agent}
        cold = [measure(urls, corpus, work, concurrency) for _ in range(args.warmup)]
        runs = [measure(urls, corpus, work, concurrency) for _ in range(args.repeat)]
    steps = runs[0]["eligible_steps"]
    if steps != STEPS_PER_COPY * args.copies:  # a job other than the one the target is for
        raise SystemExit(f"{steps} eligible steps, expected {STEPS_PER_COPY * args.copies}")
    target = Target(f"side by side {steps} steps: whole run / floor", "<=", TARGET)
    figures: dict[str, Any] = {
        "config": str(OPENAI.relative_to(ROOT)),
        "latency_s": args.latency,
        "concurrency_per_endpoint": concurrency,
        "median_repeat": repeated(runs, HEADLINE),
        "cold": {key: [m[key] for m in cold] for key in HEADLINE},
        "verdicts": [judge(target, [m["run_ratio_to_floor"] for m in runs])],
    }
    write("side_by_side", figures, load_before)
    print(json.dumps(figures, indent=2))
    v = figures["verdicts"][0]
    print(
        f"side by side, {steps} steps, {sum(runs[0]['requests'].values())} requests: whole run "
        f"{v['median']:.2f}x the floor ({v['repeats_met']}/{v['repeats']} repeats <= "
        f"{TARGET}x: {'met' if v['met'] else 'NOT MET'})"
    )


if __name__ == "__main__":
    main()
