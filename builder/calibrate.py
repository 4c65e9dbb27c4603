"""Calibrating the gate threshold θ on labelled pairs, and exporting pairs to label.

`nap-builder calibrate PAIRS.jsonl` sweeps θ and prints agreement, precision and recall of
"same" at each value, then recommends the θ with the most recall whose precision of "same"
meets a floor (default 0.98) overall and in every category with at least `MIN_CATEGORY`
pairs: a false "same" puts a compression that changed the agent's action into the training
data, a false "different" only drops a usable candidate, so precision comes first and recall
is what is left to maximise. It then prints precision and recall per category at the
recommended θ and at the pipeline's θ (`gate.threshold` of `--config`, else the default).
`nap-builder pairs OUT --sample N` draws judged candidate actions with the reference they were
compared against from a run's `judgements` and `references` tables, in the same JSONL (with
`same: null`) for a person to fill in.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from builder.errors import InputError
from builder.similarity.compare import Similarity, get_similarity
from builder.similarity.labelled import Agreement, LabelledPair, confusion, load_pairs
from builder.similarity.labelled import score as pair_score
from schemas.steps import Action

DEFAULT_THRESHOLDS = tuple(round(0.3 + 0.05 * i, 2) for i in range(14))  # 0.30 … 0.95
DEFAULT_MIN_PRECISION = 0.98
MIN_CATEGORY = 15  # categories with fewer pairs are shown but do not bind the recommendation


@dataclass(frozen=True, slots=True)
class ThresholdRow:
    threshold: float
    tp: int
    fp: int
    tn: int
    fn: int
    agreement: float
    precision: float
    recall: float


@dataclass(frozen=True, slots=True)
class Recommendation:
    threshold: float
    why: str


def sweep(
    sim: Similarity, pairs: Sequence[LabelledPair], thresholds: Iterable[float]
) -> list[ThresholdRow]:
    """Confusion figures of `sim(a, b) >= θ` against the labels, for every θ."""
    scored = [(pair_score(sim, p), p.same) for p in pairs]
    return [_row(theta, confusion(scored, theta)) for theta in thresholds]


def _row(theta: float, r: Agreement) -> ThresholdRow:
    return ThresholdRow(theta, r.tp, r.fp, r.tn, r.fn, r.accuracy, r.precision, r.recall)


def by_category(
    sim: Similarity, pairs: Sequence[LabelledPair], theta: float
) -> dict[str, tuple[int, int, Agreement]]:
    """Per category: (pairs, "same" pairs, confusion at θ), categories sorted by name."""
    groups: dict[str, list[LabelledPair]] = {}
    for p in pairs:
        groups.setdefault(p.category, []).append(p)
    return {
        name: (
            len(g),
            sum(p.same for p in g),
            confusion([(pair_score(sim, p), p.same) for p in g], theta),
        )
        for name, g in sorted(groups.items())
    }


def categories_meeting(
    sim: Similarity, pairs: Sequence[LabelledPair], theta: float, min_precision: float
) -> bool:
    """True when every category with at least `MIN_CATEGORY` pairs that says "same" at θ
    says it with precision >= the floor."""
    return all(
        r.tp + r.fp == 0 or r.precision >= min_precision
        for n, _, r in by_category(sim, pairs, theta).values()
        if n >= MIN_CATEGORY
    )


def recommend(
    rows: Sequence[ThresholdRow],
    min_precision: float,
    categories_ok: Callable[[float], bool] = lambda theta: True,
) -> Recommendation:
    """The θ with the most recall among those whose precision of "same" meets the floor,
    overall and (`categories_ok`) per large category (the highest when several tie: the
    same figures here, and the strictest on pairs not seen), else the most precise θ, with
    the reason in words."""
    if not rows:
        raise InputError("no thresholds to choose from")
    best_agreement = max(rows, key=lambda r: (r.agreement, -r.threshold))
    meeting = [
        r
        for r in rows
        if r.tp + r.fp > 0 and r.precision >= min_precision and categories_ok(r.threshold)
    ]
    if meeting:
        top = max(r.recall for r in meeting)
        plateau = sorted((r for r in meeting if r.recall == top), key=lambda r: r.threshold)
        pick = plateau[-1]
        why = (
            f"θ={pick.threshold:.2f} keeps the most recall ({pick.recall:.3f}) among thresholds "
            f"whose precision of 'same' ({pick.precision:.3f}, {pick.fp} false 'same') meets "
            f"the floor {min_precision:.2f}, overall and in every category of "
            f"{MIN_CATEGORY}+ pairs"
        )
        if len(plateau) > 1:
            why += (
                f"; θ from {plateau[0].threshold:.2f} to {plateau[-1].threshold:.2f} give the "
                "same figures, and the highest is the strictest on pairs not labelled here"
            )
        why += (
            ". Lower thresholds pass more candidates but let actions that differ count as the "
            "same, which teaches the compressor to drop what the agent needed."
        )
        if best_agreement.agreement > pick.agreement:
            why += (
                f" Plain agreement peaks at θ={best_agreement.threshold:.2f} "
                f"({best_agreement.agreement:.3f}), "
                f"but with precision {best_agreement.precision:.3f}."
            )
        return Recommendation(pick.threshold, why)
    pick = max(rows, key=lambda r: (r.precision, r.recall, -r.threshold))
    return Recommendation(
        pick.threshold,
        f"no threshold reaches precision {min_precision:.2f}; θ={pick.threshold:.2f} has the "
        f"highest precision ({pick.precision:.3f}, recall {pick.recall:.3f}). Label more pairs, "
        "check the false 'same' pairs, or use a stricter similarity.",
    )


def format_calibration(
    path: Path | str,
    similarity: str,
    pairs: Sequence[LabelledPair],
    rows: Sequence[ThresholdRow],
    choice: Recommendation,
) -> str:
    """The table and the recommendation, as printed by `nap-builder calibrate`."""
    same = sum(p.same for p in pairs)
    lines = [
        f"{path}: {len(pairs)} labelled pairs ({same} same, {len(pairs) - same} different), "
        f"similarity {similarity}",
        f"{'θ':>5} {'agreement':>10} {'precision':>10} {'recall':>7} {'tp':>5} {'fp':>4} "
        f"{'tn':>5} {'fn':>4}",
    ]
    for r in rows:
        mark = "  <- recommended" if r.threshold == choice.threshold else ""
        lines.append(
            f"{r.threshold:>5.2f} {r.agreement:>10.3f} {r.precision:>10.3f} {r.recall:>7.3f} "
            f"{r.tp:>5} {r.fp:>4} {r.tn:>5} {r.fn:>4}{mark}"
        )
    lines += ["", f"recommended θ = {choice.threshold:.2f}", choice.why]
    return "\n".join(lines)


def format_categories(
    sim: Similarity, pairs: Sequence[LabelledPair], theta: float, title: str
) -> list[str]:
    """Precision and recall of "same" per category at θ (and overall), each with its 95%
    Wilson interval: a category's figure often rests on a handful of "same" pairs."""
    lines = [
        f"{title}: precision and recall of 'same' per category (95% Wilson intervals)",
        f"{'category':<12}{'pairs':>6}{'same':>6}{'precision':>11}{'recall':>8}{'fp':>5}{'fn':>5}"
        f"{'precision 95%':>16}{'recall 95%':>13}",
    ]
    rows = list(by_category(sim, pairs, theta).items())
    whole = confusion([(pair_score(sim, p), p.same) for p in pairs], theta)
    rows.append(("all", (len(pairs), sum(p.same for p in pairs), whole)))
    for name, (n, same, r) in rows:
        precision = f"{r.precision:.3f}" if r.tp + r.fp else "-"
        recall = f"{r.recall:.3f}" if same else "-"
        small = "" if n >= MIN_CATEGORY or name == "all" else f"  (fewer than {MIN_CATEGORY})"
        p_ci = _interval(r.precision_interval) if r.tp + r.fp else "-"
        r_ci = _interval(r.recall_interval) if same else "-"
        lines.append(
            f"{name:<12}{n:>6}{same:>6}{precision:>11}{recall:>8}{r.fp:>5}{r.fn:>5}"
            f"{p_ci:>16}{r_ci:>13}{small}"
        )
    return lines


def _interval(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:.2f}-{bounds[1]:.2f}"


def calibrate(
    path: Path | Sequence[Path],
    similarity: str = "semantic",
    *,
    split: str | None = None,
    min_precision: float = DEFAULT_MIN_PRECISION,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    pipeline_theta: float | None = None,
    pipeline_source: str = "the default gate.threshold",
    environments: bool = True,
) -> str:
    """Load the pairs (optionally one split), sweep θ, recommend one, and show per category
    the figures at the recommended θ and at the pipeline's; the printable text. Several files
    are pooled (a benchmark labelled in rounds, each round its own file). Pairs that carry
    their sandbox (`env_a`, `env_b`) are compared in it unless `environments` is off."""
    paths = [path] if isinstance(path, Path) else list(path)
    pairs = [pair for one in paths for pair in load_pairs(one)]
    name = " + ".join(str(one) for one in paths)
    if split:
        pairs = [p for p in pairs if p.split == split]
    if not environments:
        pairs = [replace(p, env_a=None, env_b=None) for p in pairs]
    if not pairs:
        raise InputError(f"{name}: no labelled pairs" + (f" in split {split!r}" if split else ""))
    sim = get_similarity(similarity)
    rows = sweep(sim, pairs, thresholds)
    choice = recommend(
        rows, min_precision, lambda theta: categories_meeting(sim, pairs, theta, min_precision)
    )
    lines = [format_calibration(name, similarity, pairs, rows, choice), ""]
    lines += format_categories(
        sim, pairs, choice.threshold, f"at the recommended θ = {choice.threshold:.2f}"
    )
    if pipeline_theta is not None:
        at = confusion([(pair_score(sim, p), p.same) for p in pairs], pipeline_theta)
        lines += [
            "",
            f"at the pipeline's θ = {pipeline_theta:.2f} ({pipeline_source}): precision "
            f"{at.precision:.3f}, recall {at.recall:.3f} ({at.fp} false 'same', "
            f"{at.fn} missed)",
        ]
        if pipeline_theta != choice.threshold:
            lines += format_categories(sim, pairs, pipeline_theta, f"at θ = {pipeline_theta:.2f}")
    return "\n".join(lines)


# ---------------------------------------------------------------- pairs to label


def action_spec(action: Action) -> dict:
    """An action as a labelled-pairs entry: `{tool, command}` or `{tool, arguments}`."""
    if action.command is not None:
        return {"tool": action.tool, "command": action.command}
    try:
        arguments = json.loads(action.arguments) if action.arguments.strip() else {}
    except json.JSONDecodeError:
        arguments = {"_raw": action.arguments}
    return {"tool": action.tool, "arguments": arguments}


def export_pairs(out_dir: Path, sample: int, seed: int = 0) -> list[dict]:
    """Up to `sample` (reference, candidate action, similarity) rows from a run, seeded."""
    from builder.report.build import scan_table

    judgements = scan_table(out_dir, "judgements").collect()
    references = scan_table(out_dir, "references").collect()
    if judgements.is_empty():
        raise InputError(f"{out_dir}: no judgements table rows (run `nap-builder run` first)")
    refs: dict[tuple[str, int], list[dict]] = {}
    for row in references.iter_rows(named=True):
        if row["action"] is not None:
            refs.setdefault((row["trajectory_id"], row["step_index"]), []).append(row)
    rows = []
    for j in judgements.iter_rows(named=True):
        step_refs = sorted(
            refs.get((j["trajectory_id"], j["step_index"]), []), key=lambda r: r["reference_index"]
        )
        if j["action"] is None or not step_refs:
            continue
        for ref, score in zip(step_refs, j["similarities"] or [], strict=False):
            rows.append(
                {
                    "a": action_spec(Action(**ref["action"])),
                    "b": action_spec(Action(**j["action"])),
                    "same": None,
                    "reason": "",
                    "similarity": round(float(score), 4),
                    "similarity_name": j["similarity"],
                    "source": f"run:{j['trajectory_id']}#{j['step_index']}"
                    f"/c{j['candidate_index']}/r{ref['reference_index']}",
                }
            )
    random.Random(seed).shuffle(rows)
    return rows[:sample]


def write_pairs(rows: Sequence[dict], path: Path) -> None:
    """JSONL, one pair a line, ready to label (set `same` and `reason`)."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
