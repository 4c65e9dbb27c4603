"""What the logged reference's output proves (`builder.similarity.outcomes`): a pytest run
that passes every test it selects prints the same whatever options act only on failures."""

from __future__ import annotations

import json
from pathlib import Path

from builder.ingest.formats.base import shell_action
from builder.similarity.actions import action_units
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import EMPTY, Environment, Turn, facts
from builder.similarity.outcomes import all_passed

NEAR_MISSES = Path(__file__).parent / "near_misses"
# pytest's own summary lines (pytest 5-8: `-q` drops the rule of "="; old ones say "seconds")
PASSING = [
    "============================== 5 passed in 0.12s ===============================",
    "======================== 3 passed, 2 warnings in 1.23s =========================",
    "1 passed, 110 deselected in 0.50s",
    "============== 12 passed, 1 skipped, 1 xfailed in 65.32s (0:01:05) =============",
    "=========================== 2 passed in 0.12 seconds ===========================",
]
NOT_PASSING = [
    "========================= 1 failed, 2 passed in 0.10s ==========================",
    "============================ no tests ran in 0.01s =============================",
    "=============================== 1 error in 0.20s ===============================",
    "==================== 3 passed, 1 error in 0.40s ===================",
    "ERROR: file or directory not found: tests/test_x.py",
]


def _sh(command: str):
    return shell_action(command, raw=command, tool="bash")


def _turn(command: str, observation: str) -> Turn:
    return Turn(action_units(_sh(command)), observation)


def _real_pair(key: str) -> dict:
    for path in sorted(NEAR_MISSES.glob("pairs*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["key"] == key:
                return row
    raise AssertionError(f"no pair {key}")


def test_summaries_with_only_passes_and_skips_settle_the_run() -> None:
    for line in PASSING:
        assert all_passed(f"collected 5 items\n\ntests/test_x.py .....\n\n{line}\n"), line
    for line in NOT_PASSING:
        assert not all_passed(f"collected 5 items\n\n{line}\n"), line
    # the last summary counts: a rerun that fails after one that passed is a failing run
    assert not all_passed(f"{PASSING[0]}\n...\n{NOT_PASSING[0]}\n")


def test_a_passing_reference_makes_failure_only_options_the_same_run() -> None:
    # round 1, design: sklearn-13142's agent ran the mixture tests, its log shows them passing
    row = _real_pair("07246f190c8dcd81")
    env = Environment.from_dict(row["env_a"])
    assert env.passed and not Environment.from_dict(row["env_b"]).passed  # B is the candidate
    ran = row["a"]["command"]
    assert ran == "pytest sklearn/mixture/tests/test_gaussian_mixture.py"
    for options in ("-x", "--tb=short", "-x --tb=line --showlocals", "--maxfail=1 -l"):
        other = _sh(f"{ran} {options}")
        assert semantic(_sh(ran), other) == 0.0, options
        assert semantic_in(env)(_sh(ran), other) == 1.0, options
        assert semantic_in(env, EMPTY)(_sh(ran), other) == 1.0, options  # the benchmark's way
    # what passing does not settle stays apart: another selection, output options, a file
    for other in (f"{ran} -k means", f"{ran} -s", f"{ran} -rA", row["b"]["command"]):
        assert semantic_in(env)(_sh(ran), _sh(other)) == 0.0, other


def test_only_the_logged_run_is_settled_by_its_output() -> None:
    passing = "collected 3 items\n\ntests/test_x.py ...\n\n" + PASSING[0]
    failing = "collected 3 items\n\ntests/test_x.py .F.\n\n" + NOT_PASSING[0]
    run, stop_first = _sh("pytest tests/test_x.py"), _sh("pytest tests/test_x.py -x")
    turns = [_turn("pytest tests/test_x.py", passing), _turn("pytest tests/test_x.py", failing)]
    envs = facts(turns)
    assert semantic_in(envs[0])(run, stop_first) == 1.0
    # the same command failing: -x stops at the first failure, which the agent sees
    assert semantic_in(envs[1])(run, stop_first) == 0.0
    assert semantic_in(envs[2])(run, stop_first) == 0.0  # after the last turn: nothing logged
    # a candidate's output is never read (the benchmark's later side)
    assert semantic_in(facts(turns, unseen=(0,))[0])(run, stop_first) == 0.0
    # a passing run of another selection settles nothing about this one
    other = facts([_turn("pytest tests/test_y.py", passing)])
    assert semantic_in(other[0])(run, stop_first) == 0.0
    # two runs in one turn: the summary is not known to be this run's
    both = facts([_turn("pytest tests/test_x.py && pytest tests/test_y.py", passing)])
    assert not both[0].passed


def test_the_proof_survives_the_pair_files_round_trip() -> None:
    envs = facts([_turn("pytest tests/test_x.py", "collected 1 item\n\n" + PASSING[0])])
    row = json.loads(json.dumps(envs[0].as_dict()))
    assert Environment.from_dict(row) == envs[0]
    assert "passed" not in EMPTY.as_dict()  # rows without a proof keep their old shape
