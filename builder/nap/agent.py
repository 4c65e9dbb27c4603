"""The agent's side of a step: its requests in the replayed context, sampled actions with
format retries, and the step's reference actions."""

from __future__ import annotations

from builder.llm.protocol import ChatRequest
from builder.nap.agent_reply import parse_reply, without_focus
from builder.nap.types import Completer, NapSettings, Similarity, StepJob
from builder.steps.replay import agent_context, shared_prefix_length, tools_of
from schemas.references import ReferenceRecord
from schemas.steps import Action


def agent_request(
    job: StepJob,
    rendered: str | None,
    *,
    n: int,
    temperature: float,
    seed: int,
    settings: NapSettings,
) -> ChatRequest:
    return ChatRequest(
        messages=tuple(agent_context(job.traj, job.step, job.adapter, rendered, job.prefix)),
        tools=tools_of(job.traj),
        n=n,
        temperature=temperature,
        max_tokens=settings.agent_max_tokens,
        seed=seed,
        cache_prefix=shared_prefix_length(job.step),
    )


async def sample_actions(
    job: StepJob,
    agent: Completer,
    rendered: str | None,
    *,
    n: int,
    temperature: float,
    stage: str,
    settings: NapSettings,
) -> list[tuple[str | None, Action | None, int]]:
    """n agent replies with their parsed actions; format errors are re-asked (new seed,
    temperature ≥ 0.3 since a greedy retry would repeat itself) up to `format_retries` times."""
    results: list[tuple[str | None, Action | None, int]] = [(None, None, 0)] * n
    missing = list(range(n))
    for attempt in range(settings.format_retries + 1):
        if not missing:
            break
        temp = temperature if attempt == 0 else max(temperature, 0.3)
        request = agent_request(
            job,
            rendered,
            n=len(missing),
            temperature=temp,
            seed=settings.seed + 1000 * attempt,
            settings=settings,
        )
        response = await agent.complete(request, stage=stage)
        still = []
        for slot, completion in zip(missing, response.completions, strict=True):
            action = parse_reply(job.adapter, completion)
            results[slot] = (completion.text, action, attempt + 1)
            if action is None:
                still.append(slot)
        missing = still
    return results


async def references_for(
    job: StepJob, agent: Completer, settings: NapSettings, similarity: Similarity
) -> list[ReferenceRecord]:
    logged = without_focus(job.step.next_action) if job.step.next_action else None
    base = (job.step.trajectory_id, job.step.step_index)
    if settings.reference_mode == "logged":
        return [
            ReferenceRecord(
                *base, 0, "logged", None, None, logged, logged is None, 0, 1.0 if logged else None
            )
        ]
    sampled = await sample_actions(
        job,
        agent,
        None,
        n=settings.reference_samples,
        temperature=settings.reference_temperature,
        stage="references",
        settings=settings,
    )
    return [
        ReferenceRecord(
            *base,
            i,
            "sampled",
            agent.provider.model,
            reply,
            action,
            action is None,
            attempts,
            similarity(action, logged) if action is not None and logged is not None else None,
        )
        for i, (reply, action, attempts) in enumerate(sampled)
    ]
