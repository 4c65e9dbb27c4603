"""The gate's similarity for one step, in the sandbox the log shows at that step."""

from __future__ import annotations

from builder.nap.types import Similarity, StepJob
from builder.similarity.compare import semantic, semantic_in
from builder.steps.log_turns import environment_before


def situated_similarity(similarity: Similarity, job: StepJob) -> Similarity:
    """`semantic` knowing which runners are missing and what the agent's scripts hold before
    the step's next action (`similarity.environment`); other measures are pair-only."""
    if similarity is not semantic:
        return similarity
    env = environment_before(job.traj, job.adapter, job.step.observation_message_index + 1)
    return semantic_in(env)
