"""Selection: m shortest passers, length reward, fallback, early exit, preference pairs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.select import (
    Selection,
    early_exit_ok,
    judge_order,
    length_rewards,
    preference_pairs,
    select,
)
from builder.steps.tokens import count_tokens
from schemas.candidates import CandidateRecord
from schemas.common import from_row, to_table
from schemas.judgements import JudgementRecord
from schemas.preferences import PREFERENCE_SCHEMA, PreferenceRecord
from schemas.steps import Action, StepRecord
from schemas.supervision import SUPERVISION_SCHEMA, ChatMessage, SupervisionRecord

RAW = "collected 6 items\n" + "tests/test_a.py::test_x PASSED\n" * 20
STEP = StepRecord(
    trajectory_id="traj-1",
    step_index=3,
    action_message_index=5,
    observation_message_index=6,
    source_format="mini-swe-agent",
    harness="mini-swe-agent",
    action=Action("bash", '{"command": "pytest"}', "pytest", "pytest"),
    observation=RAW,
    eligible=True,
)


class Prompts(TypedDict):
    system: str
    prompt: str
    prompt_version: str


PROMPTS: Prompts = {"system": "SYS", "prompt": "USER", "prompt_version": "coact-v1"}


def cand(
    index: int, chars: int, *, valid: bool = True, step_index: int = 3, source: str = "teacher"
) -> CandidateRecord:
    return CandidateRecord(
        trajectory_id="traj-1",
        step_index=step_index,
        candidate_index=index,
        source=source,
        prompt_version="coact-v1",
        teacher_model="teacher-m",
        reply=f"reply {index}",
        kind="plain",
        output=f'{{"type": "plain", "content": "c{index}"}}',
        valid=valid,
        invalid_reason=None if valid else "duplicate",
        duplicate_of=None if valid else 0,
        rendered="r" * chars,
        raw_chars=len(RAW),
        rendered_chars=chars,
        raw_tokens=100,
        rendered_tokens=chars // 4,
    )


def judged(
    index: int, order: int, passed: bool, aggregate: float, *, format_error: bool = False
) -> JudgementRecord:
    return JudgementRecord(
        trajectory_id="traj-1",
        step_index=3,
        candidate_index=index,
        judge_order=order,
        agent_model="agent-m",
        reply="```bash\nls\n```",
        format_error=format_error,
        similarities=[aggregate],
        aggregate=aggregate,
        passed=passed,
    )


@pytest.mark.parametrize(
    ("lengths", "rewards"),
    [
        ([], []),
        ([42], [0.5]),
        ([7, 7, 7], [0.5, 0.5, 0.5]),
        ([10, 20, 30], [0.5, 0.0, -0.5]),
        ([30, 10, 15], [-0.5, 0.5, 0.25]),
    ],
)
def test_length_reward_is_linear_from_shortest_to_longest(
    lengths: list[int], rewards: list[float]
) -> None:
    assert length_rewards(lengths) == pytest.approx(rewards)


def test_judge_order_is_unique_valid_candidates_shortest_first() -> None:
    cands = [cand(0, 50), cand(1, 20), cand(2, 20, valid=False), cand(3, 20), cand(4, 10)]
    assert [c.candidate_index for c in judge_order(cands)] == [4, 1, 3, 0]


def test_select_keeps_the_m_shortest_passers_with_rewards_among_them() -> None:
    cands = [cand(0, 90), cand(1, 40), cand(2, 60), cand(3, 20), cand(4, 80), cand(5, 30)]
    # judge order: 3 (20), 5 (30), 1 (40), 2 (60), 4 (80), 0 (90)
    verdicts = {3: False, 5: True, 1: True, 2: False, 4: True, 0: True}
    order = [3, 5, 1, 2, 4, 0]
    judgements = [judged(i, order.index(i), verdicts[i], 0.5 + i / 10) for i in order]
    selection = select(STEP, cands, judgements, max_per_step=2, **PROMPTS)
    assert selection.drop_reason is None
    assert selection.rows == [
        SupervisionRecord(
            trajectory_id="traj-1",
            step_index=3,
            candidate_index=index,
            rank=rank,
            source="teacher",
            system="SYS",
            prompt="USER",
            target=f'{{"type": "plain", "content": "c{index}"}}',
            messages=[
                ChatMessage("system", "SYS"),
                ChatMessage("user", "USER"),
                ChatMessage("assistant", f'{{"type": "plain", "content": "c{index}"}}'),
            ],
            rendered="r" * chars,
            raw_chars=len(RAW),
            rendered_chars=chars,
            raw_tokens=100,
            rendered_tokens=chars // 4,
            similarity=0.5 + index / 10,
            length_reward=reward,
            is_fallback=False,
            teacher_model="teacher-m",
            agent_model="agent-m",
            prompt_version="coact-v1",
        )
        for rank, (index, chars, reward) in enumerate([(5, 30, 0.5), (1, 40, -0.5)])
    ]
    four = select(STEP, cands, judgements, max_per_step=4, **PROMPTS)
    assert [(r.candidate_index, r.rank, r.length_reward) for r in four.rows] == [
        (5, 0, 0.5),
        (1, 1, pytest.approx(0.5 - 10 / 60)),
        (4, 2, pytest.approx(0.5 - 50 / 60)),
        (0, 3, -0.5),
    ]


def test_rows_of_other_steps_and_unjudged_candidates_are_ignored() -> None:
    cands = [cand(0, 30), cand(1, 20), cand(0, 10, step_index=4)]
    other = JudgementRecord("traj-1", 4, 0, 0, "agent-m", "x", passed=True)
    selection = select(STEP, cands, [judged(0, 0, True, 0.9), other], **PROMPTS)
    assert [(r.candidate_index, r.rendered_chars) for r in selection.rows] == [(0, 30)]


def test_without_a_passing_candidate_the_step_is_dropped_with_a_reason() -> None:
    cands = [cand(0, 30), cand(1, 20)]
    failing = [judged(1, 0, False, 0.2), judged(0, 1, False, 0.4)]
    assert select(STEP, cands, failing, **PROMPTS) == Selection([], "no_candidate_passed")
    assert select(STEP, [cand(0, 30, valid=False)], [], **PROMPTS) == Selection(
        [], "no_valid_candidate"
    )


def test_without_a_passing_candidate_the_fallback_is_an_unchanged_target() -> None:
    selection = select(
        STEP,
        [cand(0, 30)],
        [judged(0, 0, False, 0.1)],
        fallback="unchanged",
        agent_model="agent-m",
        **PROMPTS,
    )
    target = '{"type": "unchanged"}'
    assert selection == Selection(
        [
            SupervisionRecord(
                trajectory_id="traj-1",
                step_index=3,
                candidate_index=-1,
                rank=0,
                source="fallback",
                system="SYS",
                prompt="USER",
                target=target,
                messages=[
                    ChatMessage("system", "SYS"),
                    ChatMessage("user", "USER"),
                    ChatMessage("assistant", target),
                ],
                rendered=RAW,
                raw_chars=len(RAW),
                rendered_chars=len(RAW),
                raw_tokens=count_tokens(RAW),
                rendered_tokens=count_tokens(RAW),
                similarity=None,
                length_reward=None,
                is_fallback=True,
                teacher_model=None,
                agent_model="agent-m",
                prompt_version="coact-v1",
            )
        ]
    )


def test_early_exit_and_exhaustive_judging_select_the_same_rows() -> None:
    rng = random.Random(20261129)
    stopped_early = 0
    for _ in range(300):
        count = rng.randint(1, 10)
        m = rng.randint(1, 5)
        cands = [
            cand(i, rng.randint(5, 40), valid=rng.random() > 0.15, source=rng.choice(["a", "b"]))
            for i in range(count)
        ]
        verdict = {c.candidate_index: rng.random() < 0.5 for c in cands}
        score = {c.candidate_index: round(rng.random(), 3) for c in cands}
        order = judge_order(cands)
        exhaustive = [
            judged(c.candidate_index, k, verdict[c.candidate_index], score[c.candidate_index])
            for k, c in enumerate(order)
        ]
        early: list[JudgementRecord] = []
        for judgement in exhaustive:
            if early_exit_ok(early, m):
                break
            early.append(judgement)
        stopped_early += len(early) < len(exhaustive)
        for fallback in ("drop", "unchanged"):
            full = select(STEP, cands, exhaustive, max_per_step=m, fallback=fallback, **PROMPTS)
            cheap = select(STEP, cands, early, max_per_step=m, fallback=fallback, **PROMPTS)
            assert cheap == full
    assert stopped_early > 50  # the property was exercised where it matters


def test_early_exit_needs_m_passes() -> None:
    assert not early_exit_ok([judged(0, 0, True, 1.0), judged(1, 1, False, 0.0)], 2)
    assert early_exit_ok([judged(0, 0, True, 1.0), judged(1, 1, True, 0.9)], 2)


def test_preference_pairs_pair_passing_with_failing_candidates_diagonally() -> None:
    cands = [cand(0, 10), cand(1, 20), cand(2, 30), cand(3, 40), cand(4, 50), cand(5, 60)]
    judgements = [
        judged(0, 0, False, 0.1),
        judged(1, 1, True, 0.9),
        judged(2, 2, False, 0.3, format_error=True),
        judged(3, 3, True, 0.8),
        judged(4, 4, False, 0.2),
        judged(5, 5, True, 0.7),
    ]
    pairs = preference_pairs(STEP, cands, judgements, max_pairs=3, **PROMPTS)
    assert pairs[0] == PreferenceRecord(
        trajectory_id="traj-1",
        step_index=3,
        chosen_candidate_index=1,
        rejected_candidate_index=0,
        system="SYS",
        prompt="USER",
        chosen='{"type": "plain", "content": "c1"}',
        rejected='{"type": "plain", "content": "c0"}',
        chosen_similarity=0.9,
        rejected_similarity=0.1,
        prompt_version="coact-v1",
    )
    assert [(p.chosen_candidate_index, p.rejected_candidate_index) for p in pairs] == [
        (1, 0),
        (1, 4),
        (3, 0),
    ]
    everything = preference_pairs(
        STEP, cands, judgements, max_pairs=100, include_format_errors=True, **PROMPTS
    )
    assert len(everything) == 9
    assert (1, 2) in [(p.chosen_candidate_index, p.rejected_candidate_index) for p in everything]


def test_no_preference_pairs_without_both_outcomes() -> None:
    cands = [cand(0, 10), cand(1, 20)]
    assert (
        preference_pairs(STEP, cands, [judged(0, 0, True, 1), judged(1, 1, True, 1)], **PROMPTS)
        == []
    )


def test_no_fallback_row_without_a_reference_action() -> None:
    for judgements in ([], [judged(0, 0, False, 0.1)]):
        selection = select(
            STEP, [cand(0, 30)], judgements, fallback="unchanged", has_reference_action=False,
            **PROMPTS,
        )  # fmt: skip
        assert selection == Selection([], "no_reference_action")
    kept = select(STEP, [cand(0, 30)], [], fallback="unchanged", **PROMPTS)
    assert [r.is_fallback for r in kept.rows] == [True]  # references exist: the fallback stays


def test_an_unknown_fallback_is_refused() -> None:
    with pytest.raises(ValueError, match="fallback"):
        select(STEP, [], [], fallback="keep", **PROMPTS)  # type: ignore[arg-type]


def round_trip(records: list[Any], schema: pa.Schema, cls: type, path: Path) -> list[Any]:
    pq.write_table(to_table(records, schema), path)
    back = pq.read_table(path)
    assert back.schema.equals(schema) and back.schema.metadata == schema.metadata
    return [from_row(cls, r) for r in back.to_pylist()]


def test_supervision_and_preference_rows_round_trip_through_parquet(tmp_path: Path) -> None:
    cands = [cand(0, 10), cand(1, 20), cand(2, 30)]
    judgements = [judged(0, 0, False, 0.1), judged(1, 1, True, 0.9), judged(2, 2, True, 0.8)]
    rows = select(STEP, cands, judgements, **PROMPTS).rows
    rows += select(STEP, cands[:1], judgements[:1], fallback="unchanged", **PROMPTS).rows
    pairs = preference_pairs(STEP, cands, judgements, **PROMPTS)
    assert len(rows) == 3 and len(pairs) == 2
    assert round_trip(rows, SUPERVISION_SCHEMA, SupervisionRecord, tmp_path / "s.parquet") == rows
    assert round_trip(pairs, PREFERENCE_SCHEMA, PreferenceRecord, tmp_path / "p.parquet") == pairs
