"""Generate vs likelihood gate with the embedded Gemma 3 270M, on the demo's eligible steps.

Run: `.venv/bin/python benchmarks/bench_likelihood.py [--steps N]`. The model runs in a child
process (llama.cpp can crash natively; a crash is reported, not inherited). Per step the
candidates are every rule of the pool, a lossy plain summary and `unchanged`; the reference is
the logged next action (as in the demo); every candidate is judged both ways (exhaustive).

Prints and writes `.bench/likelihood.json`:
- seconds per judged candidate in each mode (likelihood counts its one raw-context prefill per
  step) and their ratio, measured in the same run;
- how often the two gates agree (pass/fail) on those candidates, and the control's pass rate;
- what the likelihood separates: mean delta per score variant (mean, sum, grounded) for
  candidates that keep every observation token the next command copies vs candidates that drop
  one, and P(delta of a dropping candidate < delta of a keeping one) per variant.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402

LOSSY = '{"type": "plain", "content": "the command printed its usual output"}'
VARIANTS = ("mean", "sum", "grounded")


def demo_jobs(work: Path, limit: int) -> list[Any]:
    """The demo's eligible steps as NAP jobs (ingested from the bundled samples)."""
    from builder.config import load_config
    from builder.ingest.parallel import InputSpec, run_ingest
    from builder.run.shard_work import ScrubSettings, prepare_shard
    from builder.run.shards import plan_shards
    from builder.steps.pairing import EligibilityRules

    cfg = load_config(ROOT / "pipelines" / "demo.yaml")
    specs = [InputSpec(i.path, None, {}) for i in cfg.inputs]
    run_ingest(specs, work, rules=EligibilityRules(cfg.eligibility.min_tokens), workers=1)
    jobs = []
    for plan in plan_shards(work, 100):
        jobs.extend(prepare_shard(work, plan, ScrubSettings())[0])
    return jobs[:limit]


def copied_tokens(command: str, observation: str, elsewhere: str) -> set[str]:
    """Words of the next command that only this observation holds (what it copies)."""
    import re

    words = set(re.findall(r"[A-Za-z_][\w./-]{2,}", command))
    return {w for w in words if w in observation and w not in elsewhere}


async def measure(limit: int) -> dict[str, Any]:
    from builder.llm.client import LLMClient
    from builder.llm.local.inprocess import LocalProvider
    from builder.llm.scoring import Scorer, ScoreRequest
    from builder.nap.gate import likelihood_delta, likelihood_similarity
    from builder.nap.likelihood_judging import continuation_of
    from builder.nap.step import NapSettings, control_for, judge
    from builder.select import judge_order
    from builder.similarity.compare import get_similarity
    from builder.steps.replay import agent_context, tools_of
    from builder.teacher.candidates import build_candidates
    from builder.teacher.rules import RULES
    from schemas.references import ReferenceRecord

    provider = LocalProvider()
    agent = LLMClient(provider)
    scorer = Scorer(provider)
    settings = NapSettings(
        reference_mode="logged",
        exhaustive=True,
        agent_max_tokens=64,
        format_retries=0,
        top_k=1,
        control="judged",
    )
    similarity = get_similarity("semantic")
    with tempfile.TemporaryDirectory() as tmp:
        jobs = demo_jobs(Path(tmp), limit)
    await agent.complete(_warmup(jobs[0]), stage="warmup")  # model load outside the timings
    rows: list[dict[str, Any]] = []
    gen_s = lik_s = 0.0
    controls = []
    for job in jobs:
        logged = job.step.next_action
        if logged is None:
            continue
        reference = ReferenceRecord(
            job.step.trajectory_id, job.step.step_index, 0, "logged", None, None, logged
        )
        candidates = build_candidates(
            job.step,
            [LOSSY, '{"type": "unchanged"}'],
            tuple(RULES),
            teacher_model="bench",
            prompt_version="bench",
        )
        order = judge_order(candidates)
        started = time.perf_counter()
        judged, _ = await judge(job, agent, order, [logged], settings, similarity)
        gen_s += time.perf_counter() - started
        control, _ = await control_for(job, agent, [reference], settings, similarity)
        controls.append(bool(control and control.passed))
        continuation = continuation_of(job, reference)
        assert continuation is not None
        tools = tools_of(job.traj)
        started = time.perf_counter()
        raw_context = agent_context(job.traj, job.step, job.adapter, job.step.observation)
        raw = await scorer.score(ScoreRequest(tuple(raw_context), tools, (continuation,)))
        scored = []
        for candidate in order:
            context = agent_context(job.traj, job.step, job.adapter, candidate.rendered or "")
            scored.append(await scorer.score(ScoreRequest(tuple(context), tools, (continuation,))))
        lik_s += time.perf_counter() - started
        print(
            f"step {len(controls)}/{len(jobs)}: {len(order)} candidates, generate "
            f"{gen_s:.1f} s, likelihood {lik_s:.1f} s so far",
            file=sys.stderr,
            flush=True,
        )
        observation = job.step.observation
        index = job.step.observation_message_index
        elsewhere = "\n".join(m.content for i, m in enumerate(raw_context) if i != index)
        command = _command(logged)
        copied = copied_tokens(command, observation, elsewhere)
        raw_pairs = [(t.text, t.logprob) for t in raw.tokens[0]]
        for candidate, verdict, response in zip(order, judged, scored, strict=True):
            pairs = [(t.text, t.logprob) for t in response.tokens[0]]
            deltas = {
                v: likelihood_delta(pairs, raw_pairs, v, observation, elsewhere)  # type: ignore[arg-type]
                for v in VARIANTS
            }
            rendered = candidate.rendered or ""
            rows.append(
                {
                    "step": f"{job.step.trajectory_id[:8]}/{job.step.step_index}",
                    "source": candidate.source,
                    "kind": candidate.kind,
                    "copied_tokens": sorted(copied),
                    "keeps_copied": all(w in rendered for w in copied),
                    "generate_passed": verdict.passed,
                    "likelihood_passed": likelihood_similarity(deltas["mean"])
                    >= settings.likelihood_threshold,
                    "deltas": deltas,
                }
            )
    provider.close()
    return summarise(rows, gen_s, lik_s, controls, len(jobs))


def _command(action: Any) -> str:
    return action.command if action.command is not None else action.arguments


def _warmup(job: Any) -> Any:
    from builder.llm.protocol import ChatRequest
    from builder.steps.replay import agent_context

    messages = tuple(agent_context(job.traj, job.step, job.adapter))
    return ChatRequest(messages, n=1, temperature=0.0, max_tokens=1)


def summarise(
    rows: list[dict[str, Any]], gen_s: float, lik_s: float, controls: list[bool], steps: int
) -> dict[str, Any]:
    n = len(rows)
    judged = [r for r in rows if r["kind"] != "unchanged"]  # unchanged: delta 0 by definition
    keep = [r for r in judged if r["keeps_copied"] and r["copied_tokens"]]
    drop = [r for r in judged if not r["keeps_copied"]]
    separation = {}
    for v in VARIANTS:
        pairs = [(d["deltas"][v], k["deltas"][v]) for d in drop for k in keep]
        separation[v] = {
            "mean_delta_keeping": _mean([r["deltas"][v] for r in keep]),
            "mean_delta_dropping": _mean([r["deltas"][v] for r in drop]),
            "p_dropping_below_keeping": _mean([float(a < b) for a, b in pairs]),
            "pairs": len(pairs),
        }
    return {
        "steps": steps,
        "judged_candidates": n,
        "generate_s_per_candidate": round(gen_s / n, 3) if n else None,
        "likelihood_s_per_candidate": round(lik_s / n, 3) if n else None,
        "likelihood_to_generate_time": round(lik_s / gen_s, 3) if gen_s else None,
        "gate_agreement": _mean(
            [float(r["generate_passed"] == r["likelihood_passed"]) for r in rows]
        ),
        "generate_pass_rate": _mean([float(r["generate_passed"]) for r in rows]),
        "likelihood_pass_rate": _mean([float(r["likelihood_passed"]) for r in rows]),
        "control_pass_rate": _mean([float(c) for c in controls]),
        "steps_whose_command_copies_the_observation": len(
            {r["step"] for r in rows if r["copied_tokens"]}
        ),
        "candidates_keeping_copied_tokens": len(keep),
        "candidates_dropping_copied_tokens": len(drop),
        "separation": separation,
        "rows": rows,
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--steps",
        type=int,
        default=1000,
        help="demo steps to judge (default: every eligible demo step)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.steps))))
        return
    load_before = load_1m()
    done = subprocess.run(  # stderr (progress, llama.cpp) passes through
        [sys.executable, __file__, "--child", "--steps", str(args.steps)],
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        sys.exit(f"bench_likelihood: the model process exited with {done.returncode} (see above)")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    write("likelihood", figures, load_before)
    for key, value in figures.items():
        if key not in ("rows", "separation"):
            print(f"{key:>44}: {value}")
    for variant, numbers in figures["separation"].items():
        print(f"{'separation ' + variant:>44}: {numbers}")


if __name__ == "__main__":
    main()
