"""Reads whose output the log shows (`builder.similarity.shown`): a narrower grep, a sed range
that ends sooner and a `| head` that cuts nothing print a part of it the gate can compute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.config.stages import GateConfig
from builder.errors import InputError
from builder.ingest.formats.base import FormatAdapter, shell_action
from builder.ingest.formats.mini_swe_agent import ADAPTER as MINI
from builder.ingest.formats.swe_agent import ADAPTER as SWE_AGENT
from builder.similarity.actions import action_units
from builder.similarity.compare import semantic, semantic_in
from builder.similarity.environment import Environment, Turn, facts
from builder.similarity.labelled import load_pairs, score
from builder.similarity.shown import logged_reads, printed_overlap
from schemas.trajectories import Message

THETA = GateConfig().threshold
NEAR_MISSES = Path(__file__).parent / "near_misses"
# the round 1 design pair sympy-21930: `grep -n "latex"` on secondquant.py, then `"_latex"`
PAIR = 'grep -n "latex" sympy/physics/secondquant.py'


def _sh(command: str):
    return shell_action(command, raw=command, tool="bash")


def _mini(lines: list[str]) -> str:
    return "<returncode>0</returncode>\n<output>\n" + "\n".join(lines) + "\n</output>"


def _turn(command: str, observation: str, adapter: FormatAdapter = MINI) -> Turn:
    printed = adapter.split_observation(Message(role="user", content=observation))[1]
    return Turn(action_units(_sh(command)), observation, printed=printed)


def _scores(first: str, lines: list[str], between: list[str], then: str) -> float:
    """`first` logged printing `lines`, the turns `between`, then `then` (its output unseen)."""
    turns = [
        _turn(first, _mini(lines)),
        *(_turn(c, _mini(["ok"])) for c in between),
        _turn(then, ""),
    ]
    envs = facts(turns, unseen=(len(turns) - 1,))
    return semantic_in(envs[0], envs[-2])(_sh(first), _sh(then))


LATEX = [
    "220:    def _latex(self, printer):",
    "441:    def _latex(self, printer):",
    "480:        return r'{a^\\dagger_{%s}}' % self.state.name  # _latex",
    "901:from sympy.printing.latex import latex",
]


def test_the_real_pair_is_the_same_lines_only_with_its_log() -> None:
    pairs = [p for f in sorted(NEAR_MISSES.glob("pairs*.jsonl")) for p in load_pairs(f)]
    (pair,) = [p for p in pairs if p.a.command == PAIR and "_latex" in (p.b.command or "")]
    assert pair.same and pair.env_b is not None and pair.env_b.shown
    assert score(semantic, pair) >= THETA
    assert score(semantic, pair, environments=False) == 0.0


def test_a_narrower_grep_prints_the_logged_lines_that_hold_its_pattern() -> None:
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "_latex" a.py') == 0.75
    assert _scores('grep -n "latex" a.py', LATEX[:3], [], 'grep "_latex" a.py') == 1.0
    # `def _latex` is in two of the four lines: 2 of 4 shown by both
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "def _latex" a.py') == 0.5
    assert _scores('grep -n "latex" a.py', LATEX, ["cat b.py"], "grep -n _latex a.py") == 0.75


def test_only_what_the_logged_lines_settle() -> None:
    narrow = 'grep -n "_latex" a.py'
    assert _scores(narrow, LATEX[:3], [], 'grep -n "latex" a.py') == 0.0  # wider: unknown
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "_lat.x" a.py') == 0.0
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "_latex" b.py') == 0.0
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -wn "_latex" a.py') == 0.0
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -in "_latex" a.py') == 0.0
    edit = "sed -i 's/x/_latex/' a.py"
    assert _scores('grep -n "latex" a.py', LATEX, [edit], 'grep -n "_latex" a.py') == 0.0
    assert _scores('grep -n "latex" a.py', LATEX, [], f"{edit} && grep -n _latex a.py") == 0.0
    # an edit earlier in the same action: neither grep is settled by the log
    envs = facts([_turn('grep -n "latex" a.py', _mini(LATEX))])
    judge = semantic_in(envs[-1])
    assert judge(_sh(f"{edit} && grep -n latex a.py"), _sh(f"{edit} && grep -n _latex a.py")) == 0


def test_an_anchored_pattern_is_narrower_only_than_text_it_starts_with() -> None:
    lines = ["def f():", "    def g():", "def h():"]
    assert _scores('grep -n "def " a.py', lines, [], 'grep -n "^def " a.py') == pytest.approx(2 / 3)
    assert _scores('grep -n "^def" a.py', lines[::2], [], 'grep -n "^def h" a.py') == 0.5
    assert _scores('grep -n "^def" a.py', lines[::2], [], 'grep -n "def h" a.py') == 0.0


RANGE = [
    "class MaxLengthValidator(BaseValidator):",
    "    message = 'at most'",
    "    code = 'max_length'",
    "",
    "    def compare(self, a, b):",
    "        return a > b",
    "",
    "    def clean(self, x):",
]


def test_a_sed_range_that_ends_sooner_prints_the_logged_lines_up_to_its_end() -> None:
    first = "sed -n '/class MaxLengthValidator/,/def clean/p' a.py"
    then = "sed -n '/class MaxLengthValidator/,/return/p' a.py"
    # 5 of the 6 non-blank lines (the range stops at `return a > b`)
    assert _scores(first, RANGE, [], then) == pytest.approx(5 / 6)
    assert _scores(first, RANGE[:7], [], then) == 1.0
    two = [*RANGE, "class MaxLengthValidator2:"]  # the start again: another range may follow
    assert _scores(first, two, [], then) == 0.0
    assert _scores(first, RANGE, [], "sed -n '/class MaxLengthValidator/,/absent/p' a.py") == 0.0
    assert _scores(first, RANGE, [], "sed -n '/code/,/return/p' a.py") == 0.0


def test_a_head_that_cuts_nothing_prints_the_same() -> None:
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "latex" a.py | head -n 5') == 1.0
    assert _scores('grep -n "latex" a.py', LATEX, [], 'grep -n "latex" a.py | head -3') == 0.75
    assert semantic(_sh('grep -n "latex" a.py'), _sh('grep -n "latex" a.py | head -n 5')) < THETA


def test_outputs_that_are_not_a_whole_read_are_not_recorded() -> None:
    units = action_units(_sh("grep -n x a.py"))
    assert logged_reads(units, "3:x = 1\n") != ()
    assert logged_reads(units, "grep: a.py: No such file or directory\n") == ()
    assert logged_reads(units, "Binary file a.py matches\n") == ()
    assert logged_reads(units, "\n".join(f"{i}:x" for i in range(500))) == ()  # may be cut
    empty = "Your command ran successfully and did not produce any output."
    printed = SWE_AGENT.split_observation(Message(role="user", content=empty))[1]
    assert logged_reads(units, printed) == ()
    assert logged_reads(action_units(_sh("grep -rn x src")), "src/a.py:3:x\n") == ()


def test_the_fact_is_stored_with_the_pair_and_only_adds_equivalences() -> None:
    envs = facts([_turn('grep -n "latex" a.py', _mini(LATEX))])
    row = json.loads(json.dumps(envs[0].as_dict()))
    assert Environment.from_dict(row) == envs[0]
    # the gate at one step: the reference's own output settles the candidate's
    assert semantic_in(envs[0])(_sh('grep -n "latex" a.py'), _sh("grep -n _latex a.py")) == 0.75
    # shown on one side only (an edit between), the same search is still itself
    same = 'grep -n "latex" a.py'
    assert _scores(same, LATEX, ["sed -i 's/a/b/' a.py"], "grep -n 'latex' a.py") == 1.0
    assert printed_overlap((), ()) == 1.0


FILE = ["import os", "", "def f():", "    return os.sep", "", "def g():", "    return 1"]


def test_a_file_the_log_shows_whole_settles_every_read_of_it() -> None:
    assert _scores("cat a.py", FILE, [], "sed -n '1,7p' a.py") == 1.0
    assert _scores("cat a.py", FILE, ["ls"], "grep -n 'def ' a.py") == pytest.approx(2 / 5)
    assert _scores("cat a.py", FILE, [], "head -n 4 a.py") == pytest.approx(3 / 5)
    assert _scores("cat a.py", FILE, [], "tail -n 3 a.py") == pytest.approx(2 / 5)
    assert _scores("cat a.py", FILE, [], "sed -n '/def f/,/return/p' a.py") == pytest.approx(2 / 5)
    numbered = [f"{i:6d}\t{line}".rstrip() for i, line in enumerate(FILE, 1)]
    assert _scores("cat -n a.py", numbered, [], "sed -n '1,7p' a.py") == 1.0
    # past the end: sed shows less, an editor refuses ("Invalid `view_range`"): not settled
    assert _scores("cat a.py", FILE, [], "sed -n '1,8p' a.py") == semantic(
        _sh("cat a.py"), _sh("sed -n '1,8p' a.py")
    )


def test_an_abbreviated_or_cut_view_is_not_the_whole_file() -> None:
    units = action_units(_sh("cat a.py"))
    assert logged_reads(units, "\n".join(FILE))[0].lines == tuple(FILE)
    elided = ["    19", "    20 def f(x):", "    21 ... eliding lines 21-85 ...", "    86"]
    assert logged_reads(units, "\n".join(elided)) == ()
    listing = "Here's the files and directories up to 2 levels deep in /repo, excluding hidden:"
    assert logged_reads(units, listing + "\n/repo/a.py") == ()
    assert logged_reads(units, "x = 1\n" * 2000) == ()  # over mini-swe-agent's cut
    # SWE-agent 0.x's viewer frames its window: not the file's lines as printed
    window = action_units(_sh("open src/A.java 120"))
    framed = ["[File: /repo/src/A.java (300 lines total)]", "(104 more lines above)"]
    lines = [f"{i}:x{i}" for i in range(105, 203)]
    assert logged_reads(window, "\n".join(framed + lines)) == ()  # 98 lines: not the window
    whole = [*framed, *(f"{i}:x{i}" for i in range(105, 205)), "(96 more lines below)"]
    (shown,) = logged_reads(window, "\n".join(whole))
    assert shown.patterns == ("105",) and shown.lines == tuple(f"x{i}" for i in range(105, 205))


def test_lines_the_log_shows_settle_views_inside_them_by_what_they_print() -> None:
    """`sed -n '926,945p'` then `'926,940p'`: the ranges overlap 15 of 20 lines (0.75), but
    what both print is known, and blank lines print nothing the labels count."""
    window = [f"x{i} = {i}" if i % 4 else "" for i in range(926, 946)]  # 5 blank lines
    first, then = "sed -n '926,945p' a.py", "sed -n '926,940p' a.py"
    assert semantic(_sh(first), _sh(then)) == 0.75  # the overlap of the ranges
    assert _scores(first, window, [], then) == pytest.approx(11 / 15)  # non-blank lines
    assert _scores(first, window, [], "sed -n '930,935p' a.py") == pytest.approx(5 / 15)
    # a view past what the log shows is not settled: the overlap of the ranges again
    wider = "sed -n '926,950p' a.py"
    assert _scores(first, window, [], wider) == semantic(_sh(first), _sh(wider))
    numbered = [f"{i:6d}\t{line}".rstrip() for i, line in enumerate(window, 926)]
    editor = ["Here's the result of running `cat -n` on /testbed/a.py:", *numbered]
    assert _scores(first, editor, [], then) == pytest.approx(11 / 15)
    assert _scores(first, window[:-1], [], then) == 0.75  # 19 lines: past the end, not kept


def test_outputs_that_mark_line_ends_are_not_the_files_lines() -> None:
    units = action_units(_sh("sed -n '1,3p' a.py | cat -A"))
    assert logged_reads(units, "a = 1$\nb = 2$\n$\n") == ()
    assert logged_reads(units, "a = 1\nb = 2\nc = 3\n") != ()


def test_a_malformed_shown_read_in_a_pair_file_is_a_clear_error(tmp_path: Path) -> None:
    row = json.loads((NEAR_MISSES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[0])
    for bad in (["grep", "a.py"], ["zzz", "a.py", [], [], []], ["lines", "a.py", [], ["x"], []]):
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(row | {"env_a": {"shown": [bad]}}) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=r"bad\.jsonl:1: .*shown read"):
            load_pairs(path)
