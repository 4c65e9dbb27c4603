"""What the trajectory's own log says about the sandbox, for the similarity to use.

A pair-only similarity cannot know two things the near-miss labels decide by: whether a test
runner exists at all, and what a script the agent wrote contains. The log knows them, and
building a dataset is offline, so the whole log is there when a step is judged:
- **Missing runners.** `pytest f` and `/usr/bin/python3 -m pytest f` both print only that pytest
  is not there when neither interpreter has it (sympy-19040, sympy-16792: `No module named
  pytest`, `pytest: command not found`). A runner is missing at a turn when the nearest
  outcome of a test run by it says so (the latest before the turn, else the first after it),
  with no `pip install` of pytest in between. Such runs are one unit, "pytest unavailable",
  whatever they select.
- **Scripts the agent wrote.** `python check.py` and `python check_2.py` run the same program
  when the log shows both written whole with the same code (django-12304, django-13741:
  copies under another name). A script the log shows written whole is known by its code (the
  syntax tree `code.python_key` compares, comments and unused imports left out) instead of its
  name; one edited in place after that is known only as "this version of this file".
- **What the logged action printed.** When the step is judged, the log's own next action has
  run: a pytest run of it that passes every selected test proves the same selection passes
  whatever options act only on failures (`-x`, `--tb`: `outcomes`). Only that turn's output
  counts, and a candidate's never (`unseen`).
- **Searches that found nothing.** A turn that is one grep and printed nothing proves that
  the same search with other context options (`-A 5`) prints nothing too, and a SWE-agent
  `search_file` refused for its file proves any term is refused alike (`no_match`): at that
  step, and at later ones while every turn between only reads.
- **What a read the log shows printed.** A turn that is one read and printed its whole
  output settles what some other reads of the same file print (`shown`): a narrower grep
  (`grep _latex` after `grep latex`), a sed range that ends sooner, a `| head` that cuts
  nothing, any view, literal grep or sed range of a file shown whole, a view inside lines
  shown (`sed -n`, `head`, an editor's range, SWE-agent's window). At that step and while
  every turn since only reads; such reads are compared by the lines they print, as the
  labels compare them.
- **Where a kept shell is.** SWE-agent and OpenHands run every command in one shell that
  lives across turns, so a `cd` stays: after `cd src/main`, `open F` and `open /repo/F` are
  other files (round 12, jackson-databind-4468: the relative one is "not found").
  `log_turns` follows the `cd`s of such harnesses (a failed `cd` moves nothing) and each
  turn's environment carries the directory (`cwd`); relative paths are read from it.
  mini-swe-agent runs each command in a fresh subshell, and Claude Code resets its shell to
  the project directory, so theirs stay at the root.
- **Not the edits between.** Runs of one script before and after an edit elsewhere are
  not told apart: the gate judges a candidate and its references at one step, where nothing
  happened between them. (An epoch counting edits and installs between two turns was tried
  for the benchmark's cross-step pairs and removed: on the design split it lost 1 "same"
  pair and gained none, on the held-out split it lost 3, all re-runs whose output the edit
  did not change.)

`facts(turns)` reads the log once (pure: turns of actions and their observations in, one
`Environment` per turn out, the state before that turn acts); `situated(units, env)` rewrites
the units of an action run in that state. The gate judges every candidate against references
of the same step, so one environment serves both sides there; the near-miss benchmark pairs
actions of two turns, each in its own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from builder.similarity.no_match import as_empty, changes_nothing, empty_searches
from builder.similarity.outcomes import as_passing, passing_runs
from builder.similarity.records import Unit
from builder.similarity.shown import Shown, carried, logged_reads, printed_unit

UNAVAILABLE = ("unavailable", "pytest")
_READ_KINDS = frozenset({"read", "search"})
_MISSING = re.compile(r"No module named '?pytest'?(?![\w.])|\bpytest: (?:command )?not found")
_PRESENT = re.compile(
    r"=+ test session starts =+|^collected \d+ items?|^collecting \.\.\.|usage: pytest|"
    r"^(?:ERROR|FAILED|PASSED) \S+::|=+ [^=\n]*\b(?:passed|failed|errors?|skipped|no tests ran)"
    r"\b[^=\n]* in [\d.]+ ?s",
    re.M,
)
_PIP_PYTEST = re.compile(r"^pytest(?:[<>=!~\[;].*)?$")


@dataclass(frozen=True, slots=True)
class Environment:
    """The sandbox before one turn acts: the code of the files the agent wrote whole (by
    path, a digest of `python_key`), the interpreters a pytest run fails in ("python" is
    the environment's own and the `pytest` script; else the interpreter's path), and the
    test runs the turn's own logged output proves all-passing (`outcomes.passing_runs`)."""

    scripts: dict[str, str] = field(default_factory=dict)
    missing: frozenset[str] = frozenset()
    passed: frozenset[str] = frozenset()
    cwd: str | None = None  # where a shell kept across turns was left (`log_turns`)
    nothing: frozenset[str] = frozenset()  # searches the log shows finding nothing (`no_match`)
    shown: tuple[Shown, ...] = ()  # reads whose output the log shows (`shown`)

    def as_dict(self) -> dict:
        row: dict = {"scripts": dict(sorted(self.scripts.items())), "missing": sorted(self.missing)}
        if self.passed:
            row["passed"] = sorted(self.passed)
        if self.cwd is not None:
            row["cwd"] = self.cwd
        if self.nothing:
            row["nothing"] = sorted(self.nothing)
        if self.shown:
            row["shown"] = [s.as_list() for s in self.shown]
        return row

    @classmethod
    def from_dict(cls, row: dict) -> Environment:
        cwd = row.get("cwd")
        return cls(
            {str(k): str(v) for k, v in dict(row.get("scripts", {})).items()},
            frozenset(str(m) for m in row.get("missing", ())),
            frozenset(str(p) for p in row.get("passed", ())),
            None if cwd is None else str(cwd),
            frozenset(str(n) for n in row.get("nothing", ())),
            tuple(Shown.from_list(s) for s in row.get("shown", ())),
        )


EMPTY = Environment()


@dataclass(frozen=True, slots=True)
class Turn:
    """One acting turn of a log: its actions' units, in order, what they printed, and the
    files whose whole text the turn's editor calls leave known (path, `digest`)."""

    units: tuple[Unit, ...]
    observation: str = ""
    texts: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None  # where a shell kept across turns is when the turn starts
    printed: str | None = None  # the output without the harness's envelope (else observation)


def digest(content: object) -> str:
    return hashlib.sha256(repr(content).encode("utf-8")).hexdigest()[:16]


def runner_of(key: tuple) -> str | None:
    """The interpreter a pytest command key runs in; None for other commands."""
    if len(key) < 2 or key[0] != "test" or key[1] != "pytest":
        return None
    return next(
        (str(p[1]) for p in key if isinstance(p, tuple) and len(p) == 2 and p[0] == "interpreter"),
        "python",
    )


def _is_pipeline(unit: Unit) -> bool:
    return bool(unit.key) and all(
        isinstance(k, tuple) and k and isinstance(k[0], str) for k in unit.key
    )


def _commands(unit: Unit) -> list[tuple]:
    """The command keys of a unit (a pipeline holds one per command; a tool unit is one)."""
    return list(unit.key) if _is_pipeline(unit) else [unit.key]


def strings_in(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple | list | frozenset | set):
        for item in value:
            yield from strings_in(item)


def _installs_pytest(key: tuple) -> bool:
    if len(key) < 4 or key[:2] != ("run", "pip") or not isinstance(key[3], tuple):
        return False
    return bool(key[3]) and key[3][0] == "install" and any(_PIP_PYTEST.match(a) for a in key[3])


def step(env: Environment, unit: Unit) -> Environment:
    """The environment after one unit acts: whole writes define a script, edits of a known
    script make it a new version whose text is unknown here (`file_texts` may know it)."""
    scripts = env.scripts
    for key in _commands(unit):
        if key[0] == "write" and len(key) >= 4 and key[1] == ">" and isinstance(key[2], str):
            scripts = {**scripts, key[2]: digest(key[3])}
        elif key[0] == "write" and len(key) >= 3 and isinstance(key[2], str):
            scripts = {**scripts, key[2]: digest((scripts.get(key[2]), key))}
        elif key[0] == "edit":
            touched = [s for s in strings_in(key[1:]) if s in scripts]
            scripts = {**scripts, **{s: digest((scripts[s], key)) for s in touched}}
    return env if scripts is env.scripts else replace(env, scripts=scripts)


def _outcome(turn: Turn) -> tuple[str, bool] | None:
    """(runner, whether pytest is missing) when the turn runs pytest in one interpreter and its
    output says which; None else."""
    runners = {r for u in turn.units for k in _commands(u) if (r := runner_of(k)) is not None}
    if len(runners) != 1:
        return None
    if _MISSING.search(turn.observation):
        return runners.pop(), True
    if _PRESENT.search(turn.observation):
        return runners.pop(), False
    return None


def facts(turns: Sequence[Turn], unseen: Iterable[int] = ()) -> list[Environment]:
    """The environment before each turn (with what that turn's own output proves), and after
    the last one. Outcomes of the `unseen` turns are not read (a benchmark pair's candidate
    side: the gate never has its output)."""
    hidden = set(unseen)
    envs: list[Environment] = []
    env = EMPTY
    installs = [0] * (len(turns) + 1)  # pytest installs before turn i
    outcomes: list[tuple[int, str, bool]] = []
    passed: list[frozenset[str]] = []
    nothing: frozenset[str] = frozenset()  # empty searches, while every turn since only reads
    shown: tuple[Shown, ...] = ()  # reads the log shows, while every turn since only reads
    for i, turn in enumerate(turns):
        commands = [k for u in turn.units for k in _commands(u)]
        if i not in hidden:
            printed = turn.observation if turn.printed is None else turn.printed
            nothing |= empty_searches(commands, printed)
            shown = carried(shown, logged_reads(turn.units, printed))
        env = replace(env, cwd=turn.cwd, nothing=nothing, shown=shown)
        envs.append(env)
        if not all(changes_nothing(u.kind, u.key) for u in turn.units):
            nothing, shown = frozenset(), ()
        passed.append(frozenset() if i in hidden else passing_runs(commands, turn.observation))
        installs[i + 1] = installs[i] + any(
            _installs_pytest(k) for u in turn.units for k in _commands(u)
        )
        if i not in hidden and (seen := _outcome(turn)) is not None:
            outcomes.append((i, *seen))
        for unit in turn.units:
            env = step(env, unit)
        if turn.texts:
            env = replace(env, scripts={**env.scripts, **dict(turn.texts)})
    envs.append(replace(env, nothing=nothing, shown=shown))
    passed.append(frozenset())
    return [
        replace(e, missing=_missing_at(i, outcomes, installs), passed=passed[i])
        for i, e in enumerate(envs)
    ]


def _missing_at(i: int, outcomes: list[tuple[int, str, bool]], installs: list[int]) -> frozenset:
    status: dict[str, bool] = {}
    for j, runner, missing in outcomes:  # the first outcome after, with no install between
        if j >= i and runner not in status and installs[j] == installs[i]:
            status[runner] = missing
    for j, runner, missing in outcomes:  # the latest before wins (it is what the agent saw)
        if j < i and installs[j + 1] == installs[i]:
            status[runner] = missing
    return frozenset(r for r, m in status.items() if m)


def _file(path: str, env: Environment) -> str:
    base, sep, node = path.partition("::")
    if base not in env.scripts:
        return path
    return f"written:{env.scripts[base]}{sep}{node}"


def _situated_key(key: tuple, env: Environment) -> tuple:
    runner = runner_of(key)
    if runner is not None and runner in env.missing:
        return UNAVAILABLE
    key = as_empty(as_passing(key, env.passed), env.nothing)
    if key[:2] == ("run", "script") and len(key) > 2 and key[2] in env.scripts:
        return (*key[:2], _file(key[2], env), *key[3:])
    if runner is not None and len(key) > 2 and isinstance(key[2], tuple):
        selection = tuple(sorted(_file(p, env) for p in key[2]))
        return (*key[:2], selection, *key[3:])
    return key


def situated(units: tuple[Unit, ...], env: Environment) -> tuple[Unit, ...]:
    """The units of an action run in `env` (writes earlier in the same action included)."""
    out = []
    for unit in units:
        if (
            env.shown
            and unit.kind in _READ_KINDS  # only reads and greps are derived (`derived_reads`)
            and (printed := printed_unit(unit, env.shown)) is not None
        ):
            out.append(printed)
        elif _is_pipeline(unit):
            keys = tuple(_situated_key(k, env) for k in unit.key)
            out.append(
                Unit("test", (UNAVAILABLE,)) if UNAVAILABLE in keys else replace(unit, key=keys)
            )
        else:
            out.append(unit)
        env = step(env, unit)
        if env.shown and not changes_nothing(unit.kind, unit.key):
            env = replace(env, shown=())  # `sed -i ... && grep ...`: the file may have changed
        if env.missing and any(_installs_pytest(k) for k in _commands(unit)):
            env = replace(env, missing=frozenset())  # `pip install pytest && pytest ...`
    return tuple(out)
