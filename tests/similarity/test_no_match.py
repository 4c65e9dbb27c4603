"""A search the log shows finding nothing (`builder.similarity.no_match`): variants that only
add context lines print nothing too, while nothing between could add a match."""

from __future__ import annotations

import json
from pathlib import Path

from builder.config.stages import GateConfig
from builder.ingest.formats.base import FormatAdapter, shell_action
from builder.ingest.formats.mini_swe_agent import ADAPTER as MINI
from builder.ingest.formats.swe_agent import ADAPTER as SWE_AGENT
from builder.similarity.actions import action_units
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import Turn, facts
from builder.similarity.labelled import load_pairs, score
from builder.similarity.no_match import printed_nothing
from schemas.trajectories import Message

THETA = GateConfig().threshold
NEAR_MISSES = Path(__file__).parent / "near_misses"
# the round 3 design pair: sympy-16766, `grep -A 5 "_print_Indexed" sympy/printing/str.py`
# logged `<returncode>1</returncode>` and an empty output; then `grep "_print_Indexed"`
PAIR = 'grep -A 5 "_print_Indexed" sympy/printing/str.py'
EMPTY_MINI = "<returncode>1</returncode>\n<output>\n</output>"


def _sh(command: str):
    return shell_action(command, raw=command, tool="bash")


def _printed(observation: str, adapter: FormatAdapter) -> str:
    """The output without the harness's envelope, as `log_turns` reads it."""
    return adapter.split_observation(Message(role="user", content=observation))[1]


def _turn(command: str, observation: str, adapter: FormatAdapter = MINI) -> Turn:
    units = action_units(_sh(command))
    return Turn(units, observation, printed=_printed(observation, adapter))


def test_harness_wrappers_around_no_output_are_nothing() -> None:
    assert printed_nothing(_printed(EMPTY_MINI, MINI))
    assert printed_nothing(_printed("<returncode>1</returncode>\n<output>\n\n</output>", MINI))
    assert printed_nothing(
        _printed("OBSERVATION:\n[The command completed with exit code 1.]", SWE_AGENT)
    )
    assert printed_nothing(
        _printed("Your command ran successfully and did not produce any output.", SWE_AGENT)
    )
    assert printed_nothing(
        _printed("\n(Open file: /repo/a.py)\n(Current directory: /repo)\nbash-$", SWE_AGENT)
    )
    assert not printed_nothing(
        _printed("<returncode>0</returncode>\n<output>\n12:def f():\n</output>", MINI)
    )
    assert not printed_nothing(
        _printed(
            "<returncode>2</returncode>\n<output>\ngrep: a.py: No such file or directory\n"
            "</output>",
            MINI,
        )
    )


def test_the_real_pair_is_the_same_search_only_with_its_log() -> None:
    pairs = [p for f in sorted(NEAR_MISSES.glob("pairs*.jsonl")) for p in load_pairs(f)]
    (pair,) = [p for p in pairs if p.a.command == PAIR]
    assert pair.same and pair.env_a is not None and pair.env_a.nothing
    assert score(semantic, pair) == 1.0
    assert score(semantic, pair, environments=False) < THETA


def _scores(
    first: str, observation: str, between: list[str], then: str, adapter: FormatAdapter = MINI
) -> float:
    turns = [
        _turn(first, observation, adapter),
        *(_turn(c, EMPTY_MINI) for c in between),
        _turn(then, ""),
    ]
    envs = facts(turns, unseen=(len(turns) - 1,))
    return semantic_in(envs[0], envs[-2])(_sh(first), _sh(then))


def test_context_options_do_not_matter_when_nothing_matched() -> None:
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [], "grep -C2 P a.py") == 1.0
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, ["cat b.py", "ls src"], "grep P a.py") == 1.0


def test_only_context_options_and_only_while_nothing_changes() -> None:
    found = "<returncode>0</returncode>\n<output>\n3:P = 1\n</output>"
    assert _scores("grep -A 5 P a.py", found, [], "grep P a.py") < THETA  # it matched
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [], "grep -i P a.py") == 0.0
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [], "grep -A 5 Q a.py") == 0.0
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [], "grep -A 5 P b.py") == 0.0
    edit = "sed -i 's/x/P/' a.py"
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [edit], "grep P a.py") < THETA
    # the gate judges at one step: the reference's own output counts for the candidate
    envs = facts([_turn("grep -B 3 P a.py", EMPTY_MINI)])
    assert semantic_in(envs[0])(_sh("grep P a.py"), _sh("grep -B 3 P a.py")) == 1.0
    assert semantic(_sh("grep P a.py"), _sh("grep -B 3 P a.py")) < THETA
    assert json.dumps(envs[0].as_dict())  # the fact is stored with the pair


def test_a_search_proven_empty_on_one_side_is_still_itself() -> None:
    """The fact only adds equivalences: with an edit between, the reference's grep is proven
    empty and the later one is not, and the two are still one search (twelve rounds' first
    look after the fact found a held-out search pair it had turned from 'same' to 'different')."""
    edit = "sed -i 's/x/P/' a.py"
    assert _scores("grep -n P a.py", EMPTY_MINI, [edit], "grep -n 'P' a.py") == 1.0
    assert _scores("grep -A 5 P a.py", EMPTY_MINI, [edit], "grep -A 5 'P' a.py") == 1.0


NOT_THERE = (
    "Usage: search_file <search_term> [<file>]\n"
    "Error: File name Deserializer.java not found. Please provide a valid file name.\n"
    "(Open file: /repo/src/Deserializer.java)\n(Current directory: /repo)\nbash-$"
)


def test_search_file_on_a_file_that_is_not_there_prints_the_same_whatever_the_term() -> None:
    """SWE-agent 0.x checks the file before it searches (config/commands/search.sh); round
    12's design pair jackson-databind-2036 has two such calls with an `open` between."""
    first = 'search_file "handle missing type" Deserializer.java'
    then = 'search_file "does not contain type" Deserializer.java'
    assert _scores(first, NOT_THERE, ["open src/Deserializer.java"], then, SWE_AGENT) == 1.0
    assert _scores(first, NOT_THERE, [], 'search_file "x" Other.java', SWE_AGENT) == 0.0
    found = '[Found 1 matches for "handle missing type" in /repo/Deserializer.java]'
    assert _scores(first, found, [], then) == 0.0
    assert _scores(first, NOT_THERE, ["create Deserializer.java"], then, SWE_AGENT) == 0.0
