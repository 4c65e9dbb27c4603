"""NAP core on a small trajectory with a deterministic fake model: the exact rows of every table."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from builder.llm.client import LLMClient
from builder.llm.fake import FakeProvider
from builder.nap.step import NapSettings, StepResult, process_step
from builder.similarity.compare import get_similarity
from builder.teacher.prompt import PROMPT_VERSION
from builder.teacher.render import CODE_MARKER
from tests.nap.nap_fixtures import LOGGED_NEXT, PASSING, TEACHER_REPLIES, first_job, scripted

SETTINGS = NapSettings(
    teacher_samples=5, reference_samples=2, similarity="exact", max_per_step=4, seed=7
)


def run(settings: NapSettings, teacher_replies: list[str] | None = None) -> tuple[StepResult, int]:
    provider = scripted(teacher_replies) if teacher_replies else scripted()
    client = LLMClient(provider)
    job = first_job()
    result = asyncio.run(
        process_step(job, client, client, settings, get_similarity(settings.similarity))
    )
    return result, len(provider.requests)


def test_candidates_rows_keep_invalid_and_duplicate_replies_with_reasons() -> None:
    result, _ = run(SETTINGS)
    rows = [
        (c.candidate_index, c.source, c.kind, c.valid, c.invalid_reason, c.duplicate_of)
        for c in result.candidates
    ]
    assert rows == [
        (0, "teacher", "unchanged", True, None, None),
        (1, "teacher", "plain", True, None, None),
        (2, "teacher", "code", True, None, None),
        (3, "teacher", None, False, "no_json", None),
        (4, "teacher", "code", False, "duplicate", 2),
    ]
    code = result.candidates[2]
    assert code.rendered == "\n".join(
        [CODE_MARKER, "(compressed 18 lines: 18 passing tests)", *job_failure_lines()]
    )
    assert result.candidates[0].rendered == job_payload()
    assert all(c.prompt_version == PROMPT_VERSION for c in result.candidates)
    assert result.candidates[0].raw_chars == len(job_payload())


def job_payload() -> str:
    return first_job().step.observation


def job_failure_lines() -> list[str]:
    return job_payload().split("\n")[len(PASSING) :]


def test_references_are_sampled_on_the_raw_context() -> None:
    result, _ = run(SETTINGS)
    assert [
        (
            r.reference_index,
            r.mode,
            r.action.command if r.action else None,
            r.format_error,
            r.similarity_to_logged,
        )
        for r in result.references
    ] == [
        (0, "sampled", LOGGED_NEXT, False, 1.0),
        (1, "sampled", LOGGED_NEXT, False, 1.0),
    ]


def test_judgements_go_shortest_first_and_gate_on_similarity() -> None:
    result, _ = run(SETTINGS)
    rows = [
        (
            j.candidate_index,
            j.judge_order,
            j.action.command if j.action else None,
            j.similarities,
            j.aggregate,
            j.passed,
        )
        for j in result.judgements
    ]
    assert rows == [
        (1, 0, "ls -la", [0.0, 0.0], 0.0, False),  # the plain summary hides the traceback
        (2, 1, LOGGED_NEXT, [1.0, 1.0], 1.0, True),
        (0, 2, LOGGED_NEXT, [1.0, 1.0], 1.0, True),
        (-1, -1, LOGGED_NEXT, [1.0, 1.0], 1.0, True),  # the control: the raw observation
    ]
    assert [j.is_control for j in result.judgements] == [False, False, False, True]
    assert {j.gate_mode for j in result.judgements} == {"generate"}


def test_supervision_rows_are_the_shortest_passers_with_length_reward() -> None:
    result, _ = run(SETTINGS)
    rows = [
        (s.candidate_index, s.rank, s.length_reward, s.is_fallback, s.target)
        for s in result.supervision
    ]
    assert rows == [
        (2, 0, 0.5, False, '{"type": "code", "content": ["1-18: 18 passing tests"]}'),
        (0, 1, -0.5, False, '{"type": "unchanged"}'),
    ]
    first = result.supervision[0]
    assert [m.role for m in first.messages] == ["system", "user", "assistant"]
    assert first.messages[1].content == first.prompt and first.messages[2].content == first.target
    assert "1> tests/test_mod.py::test_case_1 PASSED" in first.prompt
    assert first.rendered_chars < first.raw_chars
    assert result.dropped is None


def test_preferences_pair_passing_with_failing_candidates() -> None:
    result, _ = run(SETTINGS)
    assert [(p.chosen_candidate_index, p.rejected_candidate_index) for p in result.preferences] == [
        (2, 1),
        (0, 1),
    ]


def test_early_exit_gives_the_same_supervision_as_exhaustive_for_fewer_requests() -> None:
    for m in (1, 2, 4):
        early, early_requests = run(dataclasses.replace(SETTINGS, max_per_step=m))
        full, full_requests = run(dataclasses.replace(SETTINGS, max_per_step=m, exhaustive=True))
        assert early.supervision == full.supervision
        assert early_requests <= full_requests
    early, early_requests = run(dataclasses.replace(SETTINGS, max_per_step=1))
    full, full_requests = run(dataclasses.replace(SETTINGS, max_per_step=1, exhaustive=True))
    assert [j.candidate_index for j in early.judgements] == [1, 2, -1]  # -1: the control
    assert early_requests == full_requests - 1 and early.agent_requests == full.agent_requests - 1


def test_a_step_where_nothing_passes_is_dropped_or_falls_back_to_unchanged() -> None:
    lossy = ['{"type": "plain", "content": "tests ran"}', '{"type": "plain", "content": "ok"}']
    settings = dataclasses.replace(SETTINGS, teacher_samples=2)
    dropped, _ = run(settings, lossy)
    assert dropped.supervision == [] and dropped.dropped == "no_candidate_passed"
    assert [(j.passed, j.is_control) for j in dropped.judgements] == [
        (False, False),
        (False, False),
        (True, True),  # the raw observation reproduces the reference: only the control passes
    ]
    fallback, _ = run(dataclasses.replace(settings, fallback="unchanged"), lossy)
    [row] = fallback.supervision
    assert (row.candidate_index, row.is_fallback, row.target, row.similarity) == (
        -1,
        True,
        '{"type": "unchanged"}',
        None,
    )
    assert row.rendered == job_payload()


def test_logged_reference_mode_sends_no_reference_request() -> None:
    result, requests = run(dataclasses.replace(SETTINGS, reference_mode="logged", max_per_step=1))
    assert [(r.mode, r.action.command if r.action else None) for r in result.references] == [
        ("logged", LOGGED_NEXT)
    ]
    # the teacher, two judged candidates and the control; no reference request
    assert requests == 1 + 2 + 1
    assert result.control_requests == 1 and result.judgements[-1].is_control


def test_format_errors_are_retried_then_recorded() -> None:
    from builder.llm.fake import FakeProvider

    provider = FakeProvider(
        lambda request, i: (
            '{"type": "unchanged"}'
            if request.json_schema
            else "I think we should look at the code."
        )
    )
    client = LLMClient(provider)
    settings = dataclasses.replace(
        SETTINGS, teacher_samples=1, reference_samples=1, format_retries=2
    )
    result = asyncio.run(
        process_step(first_job(), client, client, settings, get_similarity("exact"))
    )
    [reference] = result.references
    assert reference.format_error and reference.attempts == 3 and reference.action is None
    assert result.dropped == "no_reference_action" and result.judgements == []
    # no agent action supports even `unchanged`: the fallback does not apply
    fallback = dataclasses.replace(settings, fallback="unchanged")
    result = asyncio.run(
        process_step(first_job(), client, client, fallback, get_similarity("exact"))
    )
    assert result.supervision == [] and result.dropped == "no_reference_action"


# ---------------------------------------------------------------- request parameters


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


def test_teacher_reference_and_judgement_requests_carry_their_own_parameters() -> None:
    import json

    from builder.llm.protocol import Message
    from builder.nap.step import StepJob, compressor_prompt
    from builder.steps.replay import agent_context

    settings = dataclasses.replace(
        SETTINGS,
        teacher_temperature=0.9,
        teacher_max_tokens=777,
        reference_temperature=0.6,
        agent_temperature=0.1,
        agent_max_tokens=333,
        max_per_step=1,
    )
    base = first_job()
    job = StepJob(dataclasses.replace(base.traj, tools=json.dumps(TOOLS)), base.step, base.adapter)
    provider = scripted()
    client = LLMClient(provider)
    result = asyncio.run(process_step(job, client, client, settings, get_similarity("exact")))
    teacher = [r for r in provider.requests if r.json_schema is not None]
    agent = [r for r in provider.requests if r.json_schema is None]
    assert len(teacher) == 1
    assert len(agent) == 1 + result.judge_requests + result.control_requests

    [t] = teacher
    system, user = compressor_prompt(job)
    assert (t.n, t.temperature, t.max_tokens, t.seed, t.tools, t.cache_prefix) == (
        5,
        0.9,
        777,
        7,
        None,
        None,
    )
    assert t.messages == (Message("system", system), Message("user", user))

    prefix = job.step.observation_message_index
    reference, *judged = agent
    assert (reference.n, reference.temperature, reference.max_tokens, reference.seed) == (
        2,
        0.6,
        333,
        7,
    )
    assert reference.tools == tuple(TOOLS) and reference.cache_prefix == prefix
    assert list(reference.messages) == agent_context(job.traj, job.step, job.adapter)
    assert judged and all(
        (j.n, j.temperature, j.max_tokens, j.seed, j.tools, j.cache_prefix)
        == (1, 0.1, 333, 7, tuple(TOOLS), prefix)
        for j in judged
    )
    rendered = {c.candidate_index: c.rendered for c in result.candidates}
    candidates = [row for row in result.judgements if not row.is_control]
    expected = [
        agent_context(job.traj, job.step, job.adapter, rendered[row.candidate_index])
        for row in candidates
    ]
    if result.control_requests:  # the raw observation, judged as the control
        expected.append(agent_context(job.traj, job.step, job.adapter))
    sent = [list(request.messages) for request in judged]
    assert sorted(map(repr, sent)) == sorted(map(repr, expected))
    for request in judged:
        assert request.messages[:prefix] == reference.messages[:prefix]  # the cached prefix


# ---------------------------------------------------------------- semantic, sampled references

REFERENCES = [
    LOGGED_NEXT,  # sed -n 25,35p textstats/stats.py
    "nl -ba textstats/stats.py | sed -n '25,35p'",  # the same lines, numbered
    "cat textstats/stats.py",  # the whole file: a neighbour, not the same action
]
NUMBERED = "nl -ba textstats/stats.py | sed -n '25,35p'"


def semantic_agent() -> FakeProvider:
    """References vary by sample; a judged agent that sees the traceback reads the same lines
    numbered (a different string, the same action), one that does not lists files."""

    def respond(request, index):  # type: ignore[no-untyped-def]
        if request.json_schema is not None:
            return TEACHER_REPLIES[index]
        observation = request.messages[-1].content
        if request.n > 1:
            return f"THOUGHT: look\n\n```bash\n{REFERENCES[index]}\n```"
        if "ZeroDivisionError" in observation:
            return f"THOUGHT: look\n\n```bash\n{NUMBERED}\n```"
        return "THOUGHT: look around\n\n```bash\nls -la\n```"

    return FakeProvider(respond)


def test_process_step_with_the_semantic_similarity_and_sampled_references() -> None:
    settings = dataclasses.replace(
        SETTINGS, similarity="semantic", reference_samples=3, top_k=3, exhaustive=True
    )
    client = LLMClient(semantic_agent())
    result = asyncio.run(
        process_step(first_job(), client, client, settings, get_similarity("semantic"))
    )
    refs = [
        (r.action.command if r.action else None, r.similarity_to_logged) for r in result.references
    ]
    assert refs == [(REFERENCES[0], 1.0), (REFERENCES[1], 1.0), (REFERENCES[2], 0.25)]
    rows = {j.candidate_index: j for j in result.judgements}
    for index in (0, 2):  # unchanged and the line-range compression keep the traceback
        row = rows[index]
        assert row.action is not None and row.action.command == NUMBERED
        assert row.similarities == [1.0, 1.0, 0.25]  # equal lines, equal lines, whole file
        # `agree`: 2 of the 3 references are the same action (of 2 needed, out of 2 valid)
        assert row.aggregate == pytest.approx(2 / 3) and row.passed
        assert row.similarity == "semantic"
    lost = rows[1]  # the plain summary hides the traceback: the agent lists files instead
    assert lost.action is not None and lost.action.command == "ls -la"
    assert max(lost.similarities) == 0.0 and not lost.passed
    assert [s.candidate_index for s in result.supervision] == [2, 0]
    # the same replies under `exact` would pass nothing but byte-equal strings
    exact = asyncio.run(
        process_step(
            first_job(),
            LLMClient(semantic_agent()),
            LLMClient(semantic_agent()),
            dataclasses.replace(settings, similarity="exact"),
            get_similarity("exact"),
        )
    )
    assert [j.similarities for j in exact.judgements if j.candidate_index == 2] == [[0.0, 1.0, 0.0]]
    assert not any(j.passed for j in exact.judgements)


def test_a_step_with_too_few_valid_references_is_not_judged_and_says_why() -> None:
    """`agree` with 4 sampled references needs 2 valid ones (half): with 1 valid and 3 format
    errors the step is dropped as too_few_references and no candidate is judged."""

    def respond(request, index):  # type: ignore[no-untyped-def]
        if request.json_schema is not None:
            return TEACHER_REPLIES[index]
        if request.n > 1 and index > 0:
            return "THOUGHT: I forgot the block."
        return f"THOUGHT: look\n\n```bash\n{LOGGED_NEXT}\n```"

    provider = FakeProvider(respond)
    settings = dataclasses.replace(
        SETTINGS, similarity="semantic", reference_samples=4, format_retries=0
    )
    assert settings.agree_counts == (2, 2)
    client = LLMClient(provider)
    result = asyncio.run(
        process_step(first_job(), client, client, settings, get_similarity("semantic"))
    )
    assert [r.format_error for r in result.references] == [False, True, True, True]
    assert result.dropped == "too_few_references"
    assert result.judgements == [] and result.supervision == []
    assert result.judge_requests == 0 and result.judge_requests_exhaustive == 0
    two = dataclasses.replace(settings, min_references=1, min_agree=1)
    judged = asyncio.run(process_step(first_job(), client, client, two, get_similarity("semantic")))
    assert judged.dropped != "too_few_references" and judged.judgements
