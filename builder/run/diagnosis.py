"""When every request to an endpoint failed the same way: one line saying what, and the
likely fix, instead of a retry warning per request and "0/1 complete, 1 failed"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from builder.config import PipelineConfig
from builder.llm.usage import StageUsage

# what a role's endpoint most likely needs, by the kind of error all its requests met
HINTS = {
    "connection": "check {role}.base_url and that the server is running and reachable",
    "timeout": "the server did not answer within limits.timeout_s: check that it is not "
    "overloaded, or raise limits.timeout_s",
    "server_error": "the server answered 5xx: look at its logs",
    "rate_limit": "the server kept answering 429: lower limits.concurrency or "
    "limits.requests_per_minute, or check the account's rate limits",
    "bad_response": "the answers are not in the API's shape: check {role}.provider and that "
    "{role}.base_url ends with the API's root (e.g. /v1)",
    "few_choices": "the server returned fewer choices than asked",
}


def role_of(stage: str) -> str:
    """Which config role sends a stage's requests."""
    return stage if stage in ("teacher", "compressor") else "agent"


def diagnose(stages: Mapping[str, StageUsage], cfg: PipelineConfig) -> list[str]:
    """One line per role whose requests all failed (none answered, cache hits aside)."""
    answered: Counter[str] = Counter()
    errors: dict[str, Counter[str]] = {}
    for stage, usage in stages.items():
        role = role_of(stage)
        answered[role] += usage.requests
        errors.setdefault(role, Counter()).update(usage.errors)
    lines = []
    for role, kinds in sorted(errors.items()):
        if answered[role] or not kinds:
            continue
        kind, _ = kinds.most_common(1)[0]
        endpoint = getattr(cfg, role, None)
        url = getattr(endpoint, "base_url", None) or "the provider's default URL"
        counts = ", ".join(f"{k} x{n}" for k, n in kinds.most_common())
        hint = HINTS.get(kind, "see run.log for the messages").format(role=role)
        lines.append(f"every request to the {role} endpoint ({url}) failed ({counts}): {hint}")
    return lines
