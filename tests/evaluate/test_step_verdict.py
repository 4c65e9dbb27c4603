"""One eval step under the `agree` gate: too few references is a skip with its reason."""

from __future__ import annotations

import asyncio

from builder.evaluate.step_verdict import TOO_FEW, judge_step
from builder.ingest.formats.base import shell_action
from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.nap.step import NapSettings
from builder.similarity.compare import semantic
from tests.nap.nap_fixtures import LOGGED_NEXT, first_job


def test_too_few_references_skip_the_step_without_asking_the_agent() -> None:
    asked = []

    def respond(request, index):  # type: ignore[no-untyped-def]
        asked.append(request)
        return f"THOUGHT: look\n\n```bash\n{LOGGED_NEXT}\n```"

    agent = LLMClient(FakeProvider(respond))
    settings = NapSettings(reference_samples=4)  # agree: 2 of at least 2 valid references
    one = [shell_action(LOGGED_NEXT, raw=LOGGED_NEXT)]
    record = asyncio.run(judge_step("unchanged", first_job(), None, one, agent, settings, semantic))
    assert (record.evaluated, record.skip_reason, record.references) == (False, TOO_FEW, 1)
    assert asked == []
    two = asyncio.run(
        judge_step("unchanged", first_job(), None, one * 2, agent, settings, semantic)
    )
    assert two.evaluated and two.preserved and len(asked) == 1
