"""The labelled action pairs and agreement of a similarity with them.

Shared by the tests (which assert floors), `benchmarks/agreement.py` (which reports) and
`nap-builder calibrate` (which reads a user's own pairs in the same JSONL). A row is
`{a, b, same, reason, category?, source?, split?}` with `a`/`b` as `{tool, command}` for shells
or `{tool, arguments}` for tool calls. The split of a pair is fixed by a hash of the pair
(`split_of`), decided before any tuning; pairs written while building the similarity are
`design`, and the held-out half is never looked at pair by pair while tuning.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from builder.errors import InputError
from builder.ingest.formats.base import shell_action, tool_call_action
from builder.similarity.compare import Similarity, semantic, semantic_in
from builder.similarity.environment import Environment
from schemas.steps import Action

LABELS_PATH = Path(__file__).resolve().parents[2] / "tests" / "similarity" / "labelled_pairs.jsonl"


@dataclass(frozen=True, slots=True)
class LabelledPair:
    a: Action
    b: Action
    same: bool
    reason: str
    split: str = "design"  # "design": tuned on; "holdout": never tuned on (see split_of)
    category: str = "other"
    source: str = "hand"
    # what the pair's log says about the sandbox at each side (`near_miss_environments.py`)
    env_a: Environment | None = None
    env_b: Environment | None = None


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

    @property
    def precision_interval(self) -> tuple[float, float]:
        return wilson(self.tp, self.tp + self.fp)

    @property
    def recall_interval(self) -> tuple[float, float]:
        return wilson(self.tp, self.tp + self.fn)

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


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n (95% at z 1.96): what a precision of 5
    of 6 can be said to be (0.44 to 0.97), which a bare 0.833 hides. (0, 1) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def to_action(spec: dict) -> Action:
    """An Action from a table entry: `{tool, command}` for shells (and harness commands such
    as SWE-agent's), `{tool, arguments}` else."""
    tool = spec["tool"]
    if "command" in spec:
        return shell_action(spec["command"], raw=spec["command"], tool=tool)
    return tool_call_action(tool, spec.get("arguments", {}))


def split_of(a: dict, b: dict) -> str:
    """`holdout` for about half of all pairs, by a hash of the (unordered) pair."""
    sides = sorted(json.dumps(x, sort_keys=True, ensure_ascii=False) for x in (a, b))
    digest = hashlib.sha256("\n".join(sides).encode("utf-8")).digest()
    return "holdout" if digest[0] % 2 == 0 else "design"


def load_pairs(path: Path = LABELS_PATH) -> list[LabelledPair]:
    """All labelled pairs of a JSONL table; a bad row is an error naming the line."""
    pairs = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read labelled pairs ({exc.strerror})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            a, b = to_action(row["a"]), to_action(row["b"])
            same = row["same"]
            if not isinstance(same, bool):
                raise TypeError("'same' must be true or false")
            pairs.append(
                LabelledPair(
                    a,
                    b,
                    same,
                    str(row.get("reason", "")),
                    str(row.get("split", "design")),
                    str(row.get("category", "other")),
                    str(row.get("source", "hand")),
                    _environment(row.get("env_a")),
                    _environment(row.get("env_b")),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InputError(f"{path}:{number}: not a labelled pair ({exc})") from None
    return pairs


def _environment(row: object) -> Environment | None:
    if row is None:
        return None
    if not isinstance(row, dict):
        raise TypeError("an environment must be an object")
    return Environment.from_dict(row)


def score(sim: Similarity, pair: LabelledPair, environments: bool = True) -> float:
    """The pair's similarity; `semantic` in the sandbox each side ran in, where the pair
    carries it and `environments` is on (the gate's own view: it judges with the log)."""
    if environments and sim is semantic and pair.env_a is not None:
        return semantic_in(pair.env_a, pair.env_b)(pair.a, pair.b)
    return sim(pair.a, pair.b)


def agreement(sim: Similarity, pairs: list[LabelledPair], threshold: float = 0.65) -> Agreement:
    """Confusion counts of `sim(a, b) >= threshold` vs the human label."""
    return confusion([(score(sim, p), p.same) for p in pairs], threshold)


def confusion(scored: list[tuple[float, bool]], threshold: float) -> Agreement:
    """Confusion counts of (score, label) pairs at one threshold (scores computed once)."""
    tp = fp = tn = fn = 0
    for score, same in scored:
        said = score >= threshold
        tp += said and same
        fp += said and not same
        tn += not said and not same
        fn += not said and same
    return Agreement(tp=tp, fp=fp, tn=tn, fn=fn)
