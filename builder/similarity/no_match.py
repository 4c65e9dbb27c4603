"""A search the log shows finding nothing: variants that only add context find nothing too.

`grep -A 5 P f` prints the lines that match P with five after each; when nothing matches,
it prints nothing, exactly as `grep P f` does (grep's `--help`: `-A`, `-B`, `-C` print
context lines around each match). Round 3 design pair sympy-16766: `grep -A 5
"_print_Indexed" sympy/printing/str.py` logs an empty output (`<returncode>1</returncode>`),
and the agent's next action, `grep "_print_Indexed"` on the same file, shows the same
nothing. Only context options are dropped: `-i`, `-w`, `-v`, `-l`, `-c`, other patterns or
files can find or print something, so they stay part of the search.

SWE-agent's `search_file <term> <file>` checks the file before it searches: a file that is not
there prints only "Usage: ..." and "Error: File name <file> not found" (0.x
config/commands/search.sh), whatever the term. Round 12 design pair jackson-databind-2036:
two `search_file` calls with other phrases on `MappingIteratorDeserializer.java`, which is
not in the working directory; the first one's log shows that error.

The fact comes from one turn's own output, when that turn is one grep (or rg) and printed
nothing (`printed_nothing`, on the payload its adapter splits from the harness's envelope).
It holds at that step for the gate (the logged reference's output, as `outcomes`), and at
later steps for as long as every turn between only reads (`environment.facts`): an edit
could add a match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from builder.ingest.formats.reconstruct import status_only
from builder.similarity.outcomes import stable_digest

_CONTEXT = re.compile(r"^-[ABC]=")
_SEARCHERS = frozenset({"grep", "rg"})
# SWE-agent's stand-in for an empty output (its envelope is the adapter's `split_observation`)
_NO_OUTPUT = "Your command ran successfully and did not produce any output."


_READ_KINDS = frozenset({"read", "search", "list"})
# SWE-agent's commands that only show things (0.x config/commands, 1.x tools/search, windowed)
_SWE_READERS = frozenset({"search_file", "search_dir", "find_file", "scroll_up", "scroll_down"})


def changes_nothing(unit_kind: str, key: tuple) -> bool:
    """Whether a unit only reads: a read, search or listing, or one of SWE-agent's viewers."""
    if unit_kind in _READ_KINDS:
        return True
    commands = key if key and all(isinstance(k, tuple) for k in key) else (key,)
    return unit_kind == "run" and all(
        len(k) > 1 and k[0] == "run" and k[1] in _SWE_READERS for k in commands
    )


def printed_nothing(printed: str) -> bool:
    """Whether a turn's output (the payloads its adapter splits from the harness's envelope,
    `environment.Turn.printed`) is empty, or a harness's words for empty."""
    text = printed.strip()
    return not text or text == _NO_OUTPUT or status_only(text)


def _is_search(key: tuple) -> bool:
    return len(key) > 4 and key[0] == "search" and key[1] in _SEARCHERS


def _is_file_search(key: tuple) -> bool:
    """SWE-agent's `search_file <term> <file>` (a run key: program, flags, positionals)."""
    return (
        len(key) > 3
        and key[:2] == ("run", "search_file")
        and isinstance(key[3], tuple)
        and len(key[3]) == 2
        and bool(key[3][0])
    )


def _identity(key: tuple) -> tuple:
    """A grep key without its context options (a frozenset of flags at index 3); a
    `search_file` key without its term."""
    if _is_file_search(key):
        return (*key[:3], key[3][1:], *key[4:])
    flags = key[3]
    if not isinstance(flags, frozenset):
        return key
    return (*key[:3], frozenset(f for f in flags if not _CONTEXT.match(f)), *key[4:])


def _proves(key: tuple, printed: str) -> bool:
    if _is_search(key):
        return printed_nothing(printed)
    return _is_file_search(key) and f"Error: File name {key[3][1]} not found" in printed


def empty_searches(commands: Iterable[tuple], printed: str) -> frozenset[str]:
    """The digest of the search a turn's output proves finds nothing: the turn is one grep
    or rg command and printed nothing, or one `search_file` whose file is not there."""
    found = list(commands)
    if len(found) != 1 or not _proves(found[0], printed):
        return frozenset()
    return frozenset({stable_digest(_identity(found[0]))})


def as_empty(key: tuple, nothing: frozenset[str]) -> tuple:
    """A search key as the empty search it is when the log proves that (`empty_searches`):
    a key of its own, so only another search the log proves empty equals it."""
    if not nothing or not (_is_search(key) or _is_file_search(key)):
        return key
    identity = _identity(key)
    return ("found nothing", identity) if stable_digest(identity) in nothing else key
