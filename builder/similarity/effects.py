"""Repeats that change nothing: a second `mkdir`/`touch` of what the line already made, an
`rm` of what it already removed. Agents repeat them when they paste a setup block twice;
the end state is the same and the repeat only adds an error line (`File exists`, `No such
file`), so the units are dropped before two lines are aligned.

Real pairs (near-miss design split): django-15382's `mkdir reproduce_app; touch
reproduce_app/__init__.py && mkdir -p reproduce_app; touch ...; cat <<EOF > models.py` vs the
same block once (3d63227d36b2e11f); sympy-21379's `rm a.py ... t.py && rm t.py` vs the first
`rm` alone (6d50d2b46fbb2e3c). Anything else between them (a script, a test run) may undo
or depend on the first effect, so it ends the run of repeats.
"""

from __future__ import annotations

from builder.similarity.records import Unit

_MAKERS = frozenset({"mkdir", "touch"})


def _file_op(unit: Unit) -> tuple[str, tuple[str, ...]] | None:
    """(program, paths) of a bare `mkdir`/`touch`/`rm` unit (no wrapper, no environment)."""
    if len(unit.key) != 1:
        return None
    key = unit.key[0]
    if len(key) != 4 or key[0] != "edit" or key[1] not in (*_MAKERS, "rm"):
        return None
    return key[1], key[3]


def without_repeated_effects(units: tuple[Unit, ...]) -> tuple[Unit, ...]:
    made: set[tuple[str, str]] = set()
    removed: set[str] = set()
    out = []
    for unit in units:
        op = _file_op(unit)
        if op is None:
            if unit.kind == "write":
                for key in unit.key:
                    removed.discard(key[2])
            else:
                made.clear()
                removed.clear()
            out.append(unit)
            continue
        prog, targets = op
        if prog == "rm":
            if targets and set(targets) <= removed:
                continue
            removed.update(targets)
            made = {(p, t) for p, t in made if t not in targets}
        else:
            if targets and all((prog, t) in made for t in targets):
                continue
            made.update((prog, t) for t in targets)
            removed.difference_update(targets)
        out.append(unit)
    return tuple(out)
