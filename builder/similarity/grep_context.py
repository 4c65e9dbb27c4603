"""Two searches that differ only in how many lines of context they show around each match
(`grep -A 20` vs `grep -A 15`, django-15103) show the same lines in part: the overlap of the
windows, scored like two reads of one file (intersection over union of the lines shown). One match
with 20 vs 15 lines after it shares 16 of 21 lines (0.76), the three quarters a read needs;
`-A 20` vs `-A 5` shares 6 of 21 and stays different. Everything else about the search
(pattern, scope, other options, where its output goes) must be equal.
"""

from __future__ import annotations

import re

_CONTEXT = re.compile(r"^(-A|-B|-C|--after-context|--before-context|--context)=(\d+)$")
_AFTER = frozenset({"-A", "--after-context"})
_BEFORE = frozenset({"-B", "--before-context"})


def _window(flags: frozenset[str]) -> tuple[frozenset[str], int, int]:
    """(the other flags, lines before, lines after each match)."""
    rest, before, after, both = set(), None, None, 0
    for flag in flags:
        match = _CONTEXT.match(flag)
        if match is None:
            rest.add(flag)
        elif match[1] in _AFTER:
            after = int(match[2])
        elif match[1] in _BEFORE:
            before = int(match[2])
        else:
            both = int(match[2])
    return frozenset(rest), both if before is None else before, both if after is None else after


def context_overlap(xs: tuple, ys: tuple) -> float | None:
    """The window overlap of two units whose keys differ only in the context of their last
    command, a search; None when anything else differs."""
    if len(xs) != len(ys) or not xs or xs[:-1] != ys[:-1]:
        return None  # only the last command's output is shown: `| wc -l` counts the lines
    x, y = xs[-1], ys[-1]
    searches = x[:1] == y[:1] == ("search",) and len(x) == len(y) > 4
    if not searches or x[:3] != y[:3] or x[4:] != y[4:]:
        return None
    (fx, bx, ax), (fy, by, ay) = _window(x[3]), _window(y[3])
    if fx != fy:
        return None
    return (min(bx, by) + min(ax, ay) + 1) / (max(bx, by) + max(ax, ay) + 1)
