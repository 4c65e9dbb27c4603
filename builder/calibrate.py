"""Calibrating the gate threshold θ on labelled pairs, and exporting pairs to label.

`nap-builder calibrate PAIRS.jsonl` sweeps θ and prints agreement, precision and recall of
"same" at each value, then recommends the lowest θ whose precision of "same" meets a floor
(default 0.98): a false "same" puts a compression that changed the agent's action into the
training data, a false "different" only drops a usable candidate, so precision comes first and
recall is what is left to maximise. `nap-builder pairs OUT --sample N` draws judged candidate
actions with the reference they were compared against from a run's `judgements` and
`references` tables, in the same JSONL (with `same: null`) for a person to fill in.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from builder.errors import InputError
from builder.similarity.compare import Similarity, get_similarity
from builder.similarity.labelled import LabelledPair, confusion, load_pairs
from schemas.steps import Action

DEFAULT_THRESHOLDS = tuple(round(0.3 + 0.05 * i, 2) for i in range(14))  # 0.30 … 0.95
DEFAULT_MIN_PRECISION = 0.98


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
    scored = [(sim(p.a, p.b), p.same) for p in pairs]
    rows = []
    for theta in thresholds:
        r = confusion(scored, theta)
        rows.append(ThresholdRow(theta, r.tp, r.fp, r.tn, r.fn, r.accuracy, r.precision, r.recall))
    return rows


def recommend(rows: Sequence[ThresholdRow], min_precision: float) -> Recommendation:
    """The θ with the most recall among those whose precision of "same" meets the floor
    (the middle one when several tie), else the most precise θ, with the reason in words."""
    if not rows:
        raise InputError("no thresholds to choose from")
    best_agreement = max(rows, key=lambda r: (r.agreement, -r.threshold))
    meeting = [r for r in rows if r.tp + r.fp > 0 and r.precision >= min_precision]
    if meeting:
        top = max(r.recall for r in meeting)
        plateau = sorted((r for r in meeting if r.recall == top), key=lambda r: r.threshold)
        pick = plateau[(len(plateau) - 1) // 2]
        why = (
            f"θ={pick.threshold:.2f} keeps the most recall ({pick.recall:.3f}) among thresholds "
            f"whose precision of 'same' ({pick.precision:.3f}, {pick.fp} false 'same') meets "
            f"the floor {min_precision:.2f}"
        )
        if len(plateau) > 1:
            why += (
                f"; θ from {plateau[0].threshold:.2f} to {plateau[-1].threshold:.2f} give the "
                "same figures, and the middle leaves a margin either side"
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
    path: Path,
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


def calibrate(
    path: Path,
    similarity: str = "semantic",
    *,
    split: str | None = None,
    min_precision: float = DEFAULT_MIN_PRECISION,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
) -> str:
    """Load the pairs (optionally one split), sweep θ, recommend one; the printable text."""
    pairs = load_pairs(path)
    if split:
        pairs = [p for p in pairs if p.split == split]
    if not pairs:
        raise InputError(f"{path}: no labelled pairs" + (f" in split {split!r}" if split else ""))
    sim = get_similarity(similarity)
    rows = sweep(sim, pairs, thresholds)
    return format_calibration(path, similarity, pairs, rows, recommend(rows, min_precision))


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
