"""The text `nap-builder plan` prints: figures per stage, then every assumption behind them."""

from __future__ import annotations

from builder.config import PipelineConfig
from builder.plan.estimate import MIN_CACHEABLE, Plan


def render_plan(plan: Plan, cfg: PipelineConfig) -> str:
    """The plan as the CLI prints it: figures per stage, then the assumptions behind them."""
    lines = [
        f"eligible steps: {plan.eligible_steps} (in {plan.trajectories} trajectories)",
        "",
        f"{'stage':<11}{'requests':>9}{'HTTP':>8}{'prompt tok':>12}{'cache read':>12}"
        f"{'cache write':>12}{'compl. tok':>12}{'compl. max':>12}{'cost USD':>10}",
    ]
    for name, s in [*plan.stages.items(), ("total", plan.total)]:
        lines.append(
            f"{name:<11}{s.requests:>9.0f}{s.http_requests:>8.0f}{s.prompt_tokens:>12,.0f}"
            f"{s.cache_read_tokens:>12,.0f}{s.cache_write_tokens:>12,.0f}"
            f"{s.completion_tokens:>12,.0f}{s.completion_tokens_max:>12,.0f}{s.cost_usd:>10.4f}"
        )
    a = plan.assumptions
    seconds = max(plan.seconds_by_limit.values(), default=0.0)
    bound = max(plan.seconds_by_limit, key=plan.seconds_by_limit.__getitem__, default="none")
    lines += [
        "",
        f"time: about {seconds / 60:.1f} min, set by {bound} ("
        + ", ".join(f"{k}: {v / 60:.1f} min" for k, v in plan.seconds_by_limit.items())
        + f"; concurrency {cfg.limits.concurrency} at {a['latency_s']:g} s per request)",
        "",
        "prompt tokens are cl100k counts of the real (scrubbed) contexts; teacher and "
        "reference requests exactly, judge requests with the observation compressed to "
        f"{a['compression']:.0%} of its tokens.",
        f"judge requests assume {a['unique_valid']:.0%} of teacher samples valid and distinct "
        f"and a pass rate of {a['pass_rate']:.0%}, with early exit at "
        f"selection.max_per_step={cfg.selection.max_per_step}.",
        f"completion tokens assume {a['completion_fraction']:.0%} of max_tokens per sample "
        "(compl. max: every sample at max_tokens).",
        f"prefix cache: the agent requests of a step share their context up to the observation "
        f"and the teacher samples their whole prompt; prefixes of {MIN_CACHEABLE}+ tokens are "
        "read from the provider's cache after the first request (cached_input price; "
        "Anthropic's first request writes it at cache_write, 1.25x input); shorter ones are "
        "billed in full.",
        "identical requests are counted once; requests already in the request cache "
        f"({plan.cached_requests} teacher/reference requests, and their steps' judge "
        "requests when both are cached) are not counted: they cost nothing.",
        "HTTP: OpenAI-compatible endpoints are assumed to honour n; Anthropic sends one "
        "request per sample.",
        "the judge-reliability control adds one agent request per step on the raw context "
        "(counted with the judgements), none when a reference sample is reused for it.",
    ]
    batched = [role for role in ("teacher", "agent") if getattr(cfg, role).batch]
    if batched:
        lines.append(
            f"batch API for {' and '.join(batched)}: its stages are priced at 50% of list "
            "(prefix-cache discounts inside batches are best-effort and assumed as above); "
            "the run takes one round per stage and judgement wave, each up to 24 h."
        )
    if plan.unpriced:
        lines.append(f"no price for {sorted(set(plan.unpriced))}: their cost is not counted")
    lines.append("no model request was sent.")
    return "\n".join(lines)
