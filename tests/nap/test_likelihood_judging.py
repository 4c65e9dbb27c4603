"""Likelihood NAP on the small trajectory with a scripted log-probability provider, and the
pure score functions of the gate."""

from __future__ import annotations

import asyncio
import dataclasses
import math

import pytest

from builder.llm.client import LLMClient
from builder.llm.scoring import (
    Continuation,
    Scorer,
    ScoreRequest,
    ScoreResponse,
    TokenLogprob,
    span_tokens,
)
from builder.nap.gate import grounded, likelihood_delta, likelihood_similarity
from builder.nap.step import NapSettings, StepResult, process_step
from builder.similarity.compare import get_similarity
from tests.nap.nap_fixtures import LOGGED_NEXT, first_job, scripted

SETTINGS = NapSettings(
    teacher_samples=5, reference_samples=2, similarity="exact", max_per_step=4, seed=7
)


class ScriptedLogprobs:
    """Each character of the action is one token: -0.1 when the traceback is in the last
    message (what the scripted agent needs to open the code), -3.0 when it is not."""

    provider = "fake"
    model = "fake-model"
    base_url = None

    def __init__(self) -> None:
        self.requests: list[ScoreRequest] = []

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        self.requests.append(request)
        seen = "ZeroDivisionError" in request.messages[-1].content
        value = -0.1 if seen else -3.0
        tokens = tuple(
            tuple(TokenLogprob(ch, value) for ch in c.text[c.span[0] : c.span[1]])
            for c in request.continuations
        )
        return ScoreResponse(tokens, 100)


def run(settings: NapSettings) -> tuple[StepResult, ScriptedLogprobs]:
    client = LLMClient(scripted())
    logprobs = ScriptedLogprobs()
    scorer = Scorer(logprobs)
    similarity = get_similarity(settings.similarity)
    result = asyncio.run(process_step(first_job(), client, client, settings, similarity, scorer))
    return result, logprobs


def test_likelihood_mode_gates_on_the_reference_tokens_and_agrees_with_generate() -> None:
    likely, logprobs = run(dataclasses.replace(SETTINGS, gate_mode="likelihood"))
    generated, _ = run(SETTINGS)
    rows = [
        (j.candidate_index, j.judge_order, j.passed, j.gate_mode, j.action)
        for j in likely.judgements
        if not j.is_control
    ]
    assert rows == [
        (1, 0, False, "likelihood", None),
        (2, 1, True, "likelihood", None),
        (0, 2, True, "likelihood", None),
    ]
    plain = likely.judgements[0]
    assert plain.scores == pytest.approx([-2.9, -2.9])  # both references, mean per token
    assert plain.similarities == pytest.approx([math.exp(-2.9)] * 2)
    assert likely.judgements[1].scores == [0.0, 0.0]
    assert likely.supervision == generated.supervision
    pairs = [(p.chosen_candidate_index, p.rejected_candidate_index) for p in likely.preferences]
    assert pairs == [
        (p.chosen_candidate_index, p.rejected_candidate_index) for p in generated.preferences
    ]
    # one raw-context request per step, then one per judged candidate; identical references
    # are scored once
    assert len(logprobs.requests) == 1 + 3
    assert all(len(r.continuations) == 1 for r in logprobs.requests)
    [continuation] = logprobs.requests[0].continuations
    assert continuation.text[continuation.span[0] : continuation.span[1]] == LOGGED_NEXT
    # the control is still the agent reproducing its reference on the raw context
    assert likely.judgements[-1].is_control and likely.judgements[-1].passed


def test_likelihood_mode_needs_a_scorer() -> None:
    client = LLMClient(scripted())
    settings = dataclasses.replace(SETTINGS, gate_mode="likelihood")
    with pytest.raises(ValueError, match="scorer"):
        asyncio.run(process_step(first_job(), client, client, settings, get_similarity("exact")))


def test_delta_variants() -> None:
    raw = [("sed", -0.5), (" -n", -0.2), (" stats", -1.0)]
    cand = [("sed", -0.5), (" -n", -0.2), (" stats", -4.0)]
    assert likelihood_delta(cand, raw, "mean") == pytest.approx(-1.0)
    assert likelihood_delta(cand, raw, "sum") == pytest.approx(-3.0)
    observation, elsewhere = "textstats/stats.py line 31", "run sed -n on files"
    assert grounded(" stats", observation, elsewhere) and not grounded(
        "sed", observation, elsewhere
    )
    assert likelihood_delta(cand, raw, "grounded", observation, elsewhere) == pytest.approx(-3.0)
    assert likelihood_delta(cand, raw, "grounded", "", "") == pytest.approx(-1.0)  # none grounded
    assert likelihood_similarity(0.5) == 1.0
    assert likelihood_similarity(-math.log(2)) == pytest.approx(0.5)


def test_span_tokens_picks_the_tokens_overlapping_the_action() -> None:
    continuation = Continuation("THOUGHT: x\n```bash\nls -la\n```", (19, 25))
    assert continuation.text[19:25] == "ls -la"
    pieces = [("<prompt>", None), ("THOUGHT", -1.0), (": x\n```", -1.0), ("bash\n", -1.0)]
    pieces += [("ls", -0.3), (" -", -0.2), ("la", -0.1), ("\n```", -2.0)]
    found = span_tokens(pieces, continuation)
    assert found == (TokenLogprob("ls", -0.3), TokenLogprob(" -", -0.2), TokenLogprob("la", -0.1))
    # a tail that stops inside the action cannot be scored
    assert span_tokens(pieces[-2:], continuation) is None
    # the action is the whole continuation, and the text begins with it
    whole = Continuation("ls -la", (0, 6))
    assert span_tokens([("ls", -0.3), (" -la", -0.1)], whole) == (
        TokenLogprob("ls", -0.3),
        TokenLogprob(" -la", -0.1),
    )
