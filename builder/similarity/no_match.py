"""A search the log shows finding nothing: variants that only add context find nothing too.

`grep -A 5 P f` prints the lines that match P with five after each; when nothing matches,
it prints nothing, exactly as `grep P f` does (grep's `--help`: `-A`, `-B`, `-C` print
context lines around each match). Round 3 design pair sympy-16766: `grep -A 5
"_print_Indexed" sympy/printing/str.py` logs an empty output (`<returncode>1</returncode>`),
and the agent's next action, `grep "_print_Indexed"` on the same file, shows the same
nothing. Only context options are dropped: `-i`, `-w`, `-v`, `-l`, `-c`, other patterns or
files can find or print something, so they stay part of the search.

The fact comes from one turn's own output, when that turn is one grep (or rg) and printed
nothing once the harness's wrapper is taken off (`printed_nothing`). It holds at that step
for the gate (the logged reference's output, as `outcomes`), and at later steps for as long
as every turn between only reads (`environment.facts`): an edit could add a match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from builder.similarity.outcomes import stable_digest

_CONTEXT = re.compile(r"^-[ABC]=")
_SEARCHERS = frozenset({"grep", "rg"})
# what harnesses write around a command's output (mini-swe-agent, SWE-agent, OpenHands)
_WRAPPERS = re.compile(
    r"<returncode>-?\d+</returncode>|</?output>|^OBSERVATION:|"
    r"Your command ran successfully and did not produce any output\.?|"
    r"\[(?:The command completed with exit code|Command finished with exit code) -?\d+\.?\]|"
    r"^\(Open file: [^\n]*\)$|^\(Current directory: [^\n]*\)$|^bash-\$$|\[exit code -?\d+\]",
    re.M,
)


def printed_nothing(observation: str) -> bool:
    """Whether a turn's logged output is empty once the harness's wrapper is removed."""
    return not _WRAPPERS.sub("", observation).strip()


def _is_search(key: tuple) -> bool:
    return len(key) > 4 and key[0] == "search" and key[1] in _SEARCHERS


def _identity(key: tuple) -> tuple:
    """A search key without its context options (a frozenset of flags at index 3)."""
    flags = key[3]
    if not isinstance(flags, frozenset):
        return key
    return (*key[:3], frozenset(f for f in flags if not _CONTEXT.match(f)), *key[4:])


def empty_searches(commands: Iterable[tuple], observation: str) -> frozenset[str]:
    """The digest of the search a turn's output proves finds nothing: the turn is one grep
    or rg command and printed nothing."""
    found = list(commands)
    if len(found) != 1 or not _is_search(found[0]) or not printed_nothing(observation):
        return frozenset()
    return frozenset({stable_digest(_identity(found[0]))})


def as_empty(key: tuple, nothing: frozenset[str]) -> tuple:
    """A search key as the empty search it is when the log proves that (`empty_searches`):
    a key of its own, so only another search the log proves empty equals it."""
    if not nothing or not _is_search(key):
        return key
    identity = _identity(key)
    return ("found nothing", identity) if stable_digest(identity) in nothing else key
