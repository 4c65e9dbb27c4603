"""Pluggable action similarity: is the agent's next action still "the same" under compression?

Three measures, by name (`get_similarity`):
- `exact`: tool, arguments and command byte-equal.
- `normalized`: equal after lexical normalisation (`normalize.action_key`).
- `semantic`: do the two actions get the same information or make the same change? Both
  become sequences of canonical units (`actions.action_units`): every command of a line,
  aligned in order, must have the same key (program, options that matter, arguments,
  environment, wrappers, redirections, code as a syntax tree, written content), so any
  difference the key holds scores 0. The only partial credit is for views: two reads of
  the same file, or two truncations (`| head -20`) of the same output, score the overlap of
  the lines they show (intersection over union), the lowest over the units of the line; two
  reads whose output the log settles (`shown`) score the share of printed lines both show.

Strict by construction: tolerance comes from the references, not from this measure. The
agent's own reference samples say how it varies on the raw context, and the gate
(`builder.nap.gate`) asks that enough of them be equivalent to the candidate's action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from builder.errors import ConfigError
from builder.ingest.formats.base import is_shell
from builder.similarity.actions import action_units
from builder.similarity.canonical import Unit
from builder.similarity.environment import EMPTY, Environment, situated
from builder.similarity.grep_context import context_overlap
from builder.similarity.normalize import action_key
from builder.similarity.overlap import range_similarity
from builder.similarity.records import WHOLE
from builder.similarity.shown import is_printed, printed_overlap
from schemas.steps import Action

Similarity = Callable[[Action, Action], float]


def exact(a: Action, b: Action) -> float:
    """1.0 iff tool, arguments and command are identical."""
    return float(a.tool == b.tool and a.arguments == b.arguments and a.command == b.command)


def normalized(a: Action, b: Action) -> float:
    """1.0 iff equal after whitespace/quoting/flag-order/path-prefix/JSON normalisation."""
    if is_shell(a) != is_shell(b):
        return 0.0
    return float(action_key(a) == action_key(b))


def semantic(a: Action, b: Action) -> float:
    """1.0 for the same work, the overlap of the lines shown for the same reads, else 0."""
    if (a.command is not None and a.command == b.command) or (
        a.tool == b.tool and a.arguments == b.arguments and a.command == b.command
    ):
        return 1.0
    return round(compare_units(action_units(a), action_units(b)), 6)


def semantic_in(env_a: Environment, env_b: Environment | None = None) -> Similarity:
    """`semantic` with what the log says about the sandbox (`environment`): `env_a` is where
    the first action runs, `env_b` (default: the same) where the second does."""
    other = env_a if env_b is None else env_b
    if env_a == EMPTY and other == EMPTY:
        return semantic
    if env_a.passed != other.passed:  # what the reference's output proves holds for both sides
        proved = env_a.passed | other.passed
        env_a, other = replace(env_a, passed=proved), replace(other, passed=proved)

    def situated_semantic(a: Action, b: Action) -> float:
        if other == env_a and env_a.cwd is None and semantic(a, b) == 1.0:
            return 1.0
        raw_a, raw_b = action_units(a, env_a.cwd), action_units(b, other.cwd)
        units_a, units_b = situated(raw_a, env_a), situated(raw_b, other)
        score = compare_units(units_a, units_b)
        if all(map(is_printed, units_a + units_b)):
            return round(score, 6)  # what both print is known: that is the answer
        if score < 1.0 and (env_a.nothing or other.nothing or env_a.shown or other.shown):
            plain_a, plain_b = (  # these facts only add equivalences: a search proven empty
                replace(env_a, nothing=frozenset(), shown=()),  # or shown on one side only
                replace(other, nothing=frozenset(), shown=()),  # is still itself
            )
            plain = compare_units(situated(raw_a, plain_a), situated(raw_b, plain_b))
            score = max(score, plain)
        return round(score, 6)

    return situated_semantic


def compare_units(xs: tuple[Unit, ...], ys: tuple[Unit, ...]) -> float:
    """Units aligned in order: the same count, each pair the same work; the lowest view
    overlap is the score (one identical command beside a different one scores 0, not 0.5)."""
    if len(xs) != len(ys):
        return 0.0
    score = 1.0
    for x, y in zip(xs, ys, strict=True):
        score = min(score, unit_similarity(x, y))
        if score == 0.0:
            break
    return score


def unit_similarity(x: Unit, y: Unit) -> float:
    if x.on_failure != y.on_failure:
        return 0.0  # `make || rm -rf build` vs `make && rm -rf build`: opposite conditions
    if x.key != y.key:
        window = context_overlap(x.key, y.key) if x.view is None and y.view is None else None
        return window or 0.0
    if x.view is None and y.view is None:
        return 1.0
    if is_printed(x):
        return printed_overlap(x.view or (), y.view or ())
    return range_similarity(x.view or (WHOLE,), y.view or (WHOLE,))


SIMILARITIES: dict[str, Similarity] = {
    "exact": exact,
    "normalized": normalized,
    "semantic": semantic,
}


def get_similarity(name: str) -> Similarity:
    """The similarity registered under `name`; unknown names are a config error."""
    try:
        return SIMILARITIES[name]
    except KeyError:
        known = ", ".join(sorted(SIMILARITIES))
        raise ConfigError(f"unknown similarity {name!r}: use one of {known}") from None


def clear_caches() -> None:
    """Drop every parse/feature/comparison cache of the package (memory, cold timings)."""
    from builder.similarity import (
        actions,
        bashparse,
        canonical,
        code,
        features,
        normalize,
        refusals,
        shown,
    )

    for fn in (
        bashparse.parse_tree,
        bashparse.parse_script,
        normalize.shell_key,
        normalize._action_key,
        features.shell_features,
        features.tool_features,
        canonical.shell_units,
        actions.tool_units,
        code.python_key,
        refusals.refusal,
        shown.printed_unit,
    ):
        fn.cache_clear()
