"""The judge-reliability control: its row, how it is obtained, and the report's warning."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools

from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.llm.protocol import ChatRequest
from builder.nap.control import JUDGED, REUSED, control_summary
from builder.nap.step import NapSettings, StepResult, process_step
from builder.similarity.compare import get_similarity
from tests.nap.nap_fixtures import LOGGED_NEXT, first_job, scripted

SETTINGS = NapSettings(
    teacher_samples=5, reference_samples=3, similarity="exact", max_per_step=4, seed=7
)


def run(settings: NapSettings, provider: FakeProvider) -> StepResult:
    client = LLMClient(provider)
    similarity = get_similarity(settings.similarity)
    return asyncio.run(process_step(first_job(), client, client, settings, similarity))


def test_the_control_is_the_raw_observation_judged_like_an_unchanged_candidate() -> None:
    provider = scripted()
    result = run(SETTINGS, provider)
    assert SETTINGS.control_mode == JUDGED  # references at 0.7, the agent greedy
    [control] = [j for j in result.judgements if j.is_control]
    [unchanged] = [c for c in result.candidates if c.kind == "unchanged"]
    [judged_unchanged] = [
        j for j in result.judgements if j.candidate_index == unchanged.candidate_index
    ]
    assert (control.candidate_index, control.judge_order, control.passed) == (-1, -1, True)
    assert control.action is not None and control.action.command == LOGGED_NEXT
    assert result.control_requests == 1
    # the control request is the unchanged candidate's request: same messages, same cache key
    agent_requests = [r for r in provider.requests if r.json_schema is None and r.n == 1]
    unchanged_messages = [
        r.messages for r in agent_requests if unchanged.rendered in r.messages[-1].content
    ]
    assert len(unchanged_messages) == 2 and unchanged_messages[0] == unchanged_messages[1]
    assert control.similarities == judged_unchanged.similarities
    assert all(s.candidate_index != -1 for s in result.supervision)


def test_references_at_the_agent_temperature_are_reused_without_a_request() -> None:
    settings = dataclasses.replace(SETTINGS, reference_temperature=0.0)
    assert settings.control_mode == REUSED
    provider = scripted()
    result = run(settings, provider)
    judged = run(dataclasses.replace(settings, control="judged"), scripted())
    [control] = [j for j in result.judgements if j.is_control]
    assert result.control_requests == 0 and judged.control_requests == 1
    assert judged.agent_requests == result.agent_requests + 1
    # sample 0 gated against samples 1 and 2 (not against itself)
    assert control.reply == result.references[0].reply and control.attempts == 0
    assert control.similarities == [1.0, 1.0] and control.passed


def test_an_agent_that_does_not_reproduce_its_reference_fails_the_control() -> None:
    calls = itertools.count()

    def forgetful(request: ChatRequest, index: int) -> str:
        if request.json_schema is not None:
            return '{"type": "unchanged"}'
        return f"THOUGHT: no idea\n\n```bash\ncat file_{next(calls)}.txt\n```"

    result = run(dataclasses.replace(SETTINGS, teacher_samples=1), FakeProvider(forgetful))
    [control] = [j for j in result.judgements if j.is_control]
    assert not control.passed and control.aggregate == 0.0


def test_the_summary_warns_below_the_floor_with_the_likely_causes() -> None:
    good = control_summary(10, 10, 0.5, JUDGED)
    assert good == {
        "mode": "judged",
        "steps": 10,
        "reproduced": 10,
        "pass_rate": 1.0,
        "floor": 0.5,
        "warning": None,
    }
    bad = control_summary(10, 2, 0.5, REUSED)
    assert bad["pass_rate"] == 0.2
    assert "2 of 10 steps (20%" in str(bad["warning"])
    assert "chat template" in str(bad["warning"]) and "gate.control_floor" in str(bad["warning"])
    assert control_summary(0, 0, 0.5, JUDGED)["pass_rate"] is None
    assert control_summary(0, 0, 0.5, JUDGED)["warning"] is None
    assert control_summary(4, 2, 0.5, JUDGED)["warning"] is None  # at the floor: fine


def test_a_reused_sample_is_gated_against_one_reference_fewer() -> None:
    from builder.nap.judging import leave_one_out
    from builder.nap.step import NapSettings

    eight = NapSettings(reference_samples=8)
    assert eight.agree_counts == (2, 4)
    assert leave_one_out(eight).agree_counts == (2, 4)  # 7 others: 2 of at least 4
    two = NapSettings(reference_samples=2)
    assert leave_one_out(two).agree_counts == (1, 1)  # the one other sample must agree
    explicit = NapSettings(reference_samples=3, min_agree=3, min_references=3)
    assert leave_one_out(explicit).agree_counts == (2, 2)
