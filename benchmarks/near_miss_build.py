"""Assemble the near-miss benchmark (step 3): mined pairs + execution verdicts + hand labels.

Run: `python benchmarks/near_miss_build.py [--out .bench/near_miss]` after
`near_miss_mine.py` and `near_miss_execute.py`. Round 2 (no executions; labels read off the
runs' logged outputs where they decide, else by hand): `--out .bench/near_miss_r2 --labels
benchmarks/near_miss_hand_labels_r2_design.tsv benchmarks/near_miss_hand_labels_r2_holdout.tsv
--target tests/similarity/near_misses/pairs_round2.jsonl`. Writes
`tests/similarity/near_misses/pairs.jsonl`, one labelled pair a line, in the format of
`tests/similarity/labelled_pairs.jsonl` (`a`, `b`, `same`, `reason`, `category`, `source`,
`split`) plus `label_by` (`execution` or `hand`) and, for executed pairs, `execution` (the
commit, the verdict and why). Hand labels live in `near_miss_hand_labels.tsv` (pair key, 1/0,
reason), written by a person reading each pair under the rules of
`tests/similarity/near_misses/LABELS.md`, never from a similarity's score.

Where execution decided a pair, its verdict is the label; a hand label that disagrees is
reported (and the execution's verdict kept). A pair without any label is an error.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HAND = Path(__file__).resolve().parent / "near_miss_hand_labels.tsv"
# labels re-decided after a second labeller disagreed: applied over every other label
ADJUDICATED = Path(__file__).resolve().parent / "near_miss_adjudications.tsv"
TARGET = ROOT / "tests" / "similarity" / "near_misses" / "pairs.jsonl"


def hand_labels(path: Path = HAND) -> dict[str, tuple[bool, str]]:
    out = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for number, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) != 3 or row[1] not in ("0", "1"):
                raise SystemExit(f"{path}:{number}: expected KEY<TAB>0|1<TAB>REASON")
            out[row[0]] = (row[1] == "1", row[2])
    return out


def adjudicate(row: dict, adjudicated: dict[str, tuple[bool, str]]) -> dict:
    """The row with its adjudicated label, if it has one, marked `adjudicated` (execution
    outputs are kept as evidence)."""
    if row["key"] not in adjudicated:
        return row
    same, reason = adjudicated[row["key"]]
    by = "log" if reason.startswith("logged outputs") else "hand"
    return row | {"same": same, "reason": reason, "label_by": by, "adjudicated": True}


def build(out_dir: Path, partial: bool = False, labels: list[Path] | None = None) -> list[dict]:
    sample = [json.loads(line) for line in (out_dir / "sample.jsonl").open(encoding="utf-8")]
    executed = {}
    runs = out_dir / "executed.jsonl"
    for line in runs.open(encoding="utf-8") if runs.exists() else ():
        row = json.loads(line)
        executed[row["key"]] = row
    hand: dict[str, tuple[bool, str]] = {}
    for path in labels or [HAND]:
        hand |= hand_labels(path)
    adjudicated = hand_labels(ADJUDICATED)
    rows = []
    missing = []
    for pair in sample:
        run = executed.get(pair["key"])
        label = hand.get(pair["key"])
        row = {k: pair[k] for k in ("a", "b")}
        if run is not None and run["verdict"] is not None:
            same = run["verdict"] == "same"
            if label is not None and label[0] != same:
                print(f"{pair['key']}: hand label {label[0]} overruled by execution ({run['why']})")
            row |= {"same": same, "reason": f"executed: {run['why']}", "label_by": "execution"}
            if label is not None:
                row["reason"] = f"{label[1]} (executed: {run['why']})"
        elif label is not None:
            # round 2: a label read off the run's own logged outputs says so in its reason
            by = "log" if label[1].startswith("logged outputs") else "hand"
            row |= {"same": label[0], "reason": label[1], "label_by": by}
        else:
            missing.append(pair["key"])
            continue
        row |= {k: pair[k] for k in ("category", "source", "split", "key")}
        if run is not None:
            row["execution"] = {
                "repo": run["repo"],
                "commit": run["commit"],
                "verdict": run["verdict"],
                "why": run["why"],
                "outputs": [_short(run[side]) for side in ("a", "b")],
            }
        rows.append(adjudicate(row, adjudicated))
    if missing and not partial:
        raise SystemExit(f"{len(missing)} pairs have no label, e.g. {missing[:5]}")
    return rows


def _short(result: dict) -> dict:
    return {
        "exit": result["exit"],
        "stdout": result["stdout"][:400],
        "stderr": result["stderr"][-300:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".bench" / "near_miss")
    parser.add_argument("--target", type=Path, default=TARGET)
    parser.add_argument("--partial", action="store_true", help="skip pairs not labelled yet")
    parser.add_argument(
        "--labels", type=Path, nargs="+", help=f"hand-label files (default {HAND.name})"
    )
    args = parser.parse_args()
    rows = build(args.out, args.partial, args.labels)
    args.target.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    args.target.write_text(text, encoding="utf-8")
    counts = Counter((r["split"], r["same"]) for r in rows)
    by = Counter(r["label_by"] for r in rows)
    print(f"wrote {len(rows)} pairs to {args.target}: {dict(counts)}, labelled by {dict(by)}")


if __name__ == "__main__":
    sys.exit(main())
