"""The hand-labelled action pairs and agreement of a similarity with them.

Shared by the tests (which assert a floor) and `benchmarks/agreement.py` (which reports).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from builder.actions.similarity import Similarity
from builder.formats.base import SHELL_TOOLS, shell_action, tool_call_action
from schemas.steps import Action

LABELS_PATH = Path(__file__).resolve().parents[2] / "tests" / "actions" / "labelled_pairs.jsonl"


@dataclass(frozen=True, slots=True)
class LabelledPair:
    a: Action
    b: Action
    same: bool
    reason: str
    split: str = "design"  # "design": seen while building semantic; "holdout": labelled after


@dataclass(frozen=True, slots=True)
class Agreement:
    """Confusion counts of "score >= threshold" against the labels."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def accuracy(self) -> float:
        total = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "accuracy": round(self.accuracy, 4),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def to_action(spec: dict) -> Action:
    """An Action from a table entry: `{tool, command}` for shells, `{tool, arguments}` else."""
    tool = spec["tool"]
    if "command" in spec and tool in SHELL_TOOLS:
        return shell_action(spec["command"], raw=spec["command"], tool=tool)
    return tool_call_action(tool, spec.get("arguments", {}))


def load_pairs(path: Path = LABELS_PATH) -> list[LabelledPair]:
    """All labelled pairs of the table."""
    pairs = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                a, b = to_action(row["a"]), to_action(row["b"])
                split = row.get("split", "design")
                pairs.append(LabelledPair(a, b, row["same"], row["reason"], split))
    return pairs


def agreement(sim: Similarity, pairs: list[LabelledPair], threshold: float = 0.65) -> Agreement:
    """Confusion counts of `sim(a, b) >= threshold` vs the human label."""
    tp = fp = tn = fn = 0
    for pair in pairs:
        said = sim(pair.a, pair.b) >= threshold
        tp += said and pair.same
        fp += said and not pair.same
        tn += not said and not pair.same
        fn += not said and pair.same
    return Agreement(tp=tp, fp=fp, tn=tn, fn=fn)
