"""What the logged reference's own output proves about runs like it, for the gate to use.

When the gate judges a step, the logged next action has run and the log holds what it
printed. Some outputs settle whether a nearby command would print the same:

- **Every selected test passed.** pytest's `-x`/`--exitfirst`, `--maxfail`, `--tb`,
  `-l`/`--showlocals` and `--full-trace` act only on a failure (pytest's `--help`: "exit
  instantly on first error or failed test", "traceback print mode", "show locals in
  tracebacks"). When the reference's run of a selection ends in a summary with passes and no
  failure or error, the same selection with other such options runs the same tests to the
  same summary: `pytest f -k auth -v` and `pytest f -k auth --tb=short` where no test fails.

The fact is kept as a digest of the run's identity without those options (`passing_runs`),
and a run whose identity has that digest is compared by it (`as_passing`). A run the output
does not settle keeps every option: `-x` on a selection that fails stops at the first
failure, and that is information the agent gets.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

# options that change nothing unless a test fails or errors (pytest --help)
_FAILURE_ONLY = re.compile(r"^(?:-x|-l|--showlocals|--full-trace|--maxfail=.*|--tb=.*)$")
# the final summary line: "===== 3 passed, 1 skipped in 0.12s =====" (or bare, under -q)
_SUMMARY = re.compile(
    r"^=*[ \t]*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+ ?s(?:econds)?\b[^=\n]*=*[ \t]*$", re.M
)
_SETTLED = frozenset({"passed", "skipped", "deselected", "xfailed", "xpassed", "warning",
                      "warnings"})  # fmt: skip


def stable_digest(value: object) -> str:
    """A digest of a key that is the same in every process (sets sorted, not hash-ordered)."""
    return hashlib.sha256(_canonical(value).encode("utf-8")).hexdigest()[:16]


def _canonical(value: object) -> str:
    if isinstance(value, frozenset | set):
        return "{" + ",".join(sorted(_canonical(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ",".join(_canonical(v) for v in value) + ")"
    return repr(value)


def all_passed(observation: str) -> bool:
    """Whether the last pytest summary in `observation` has passes and no failure or error."""
    summaries = _SUMMARY.findall(observation)
    if not summaries:
        return False
    counts = [part.split(" ", 1) for part in summaries[-1].split(", ")]
    words = {word for _, word in counts}
    return "passed" in words and words <= _SETTLED


def _is_pytest(key: tuple) -> bool:
    return len(key) > 3 and key[:2] == ("test", "pytest") and isinstance(key[3], frozenset)


def _identity(key: tuple) -> tuple:
    """A pytest key without the options that act only on failures."""
    flags = frozenset(f for f in key[3] if not _FAILURE_ONLY.match(f))
    return (*key[:3], flags, *key[4:])


def passing_runs(commands: Iterable[tuple], observation: str) -> frozenset[str]:
    """The digests of the pytest run a turn's output proves all-passing: the turn runs pytest
    once (so the summary is that run's) and its last summary has only passes and skips."""
    runs = [k for k in commands if _is_pytest(k)]
    if len(runs) != 1 or not all_passed(observation):
        return frozenset()
    return frozenset({stable_digest(_identity(runs[0]))})


def as_passing(key: tuple, passed: frozenset[str]) -> tuple:
    """A pytest key as the run it is when the log proves that run passes (`passing_runs`)."""
    if not passed or not _is_pytest(key):
        return key
    identity = _identity(key)
    return identity if stable_digest(identity) in passed else key
