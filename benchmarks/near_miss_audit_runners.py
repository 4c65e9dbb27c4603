"""Audit one class of near-miss labels against the runs' own logs: pytest vs sympy's bin/test.

Run: `python benchmarks/near_miss_audit_runners.py [--apply]` after `near_miss_mine.py`
(it reads the trajectory files the miner cached under `.bench/near_miss*/sources`).

Round 1 labelled every pair of the same test files run by pytest and by `bin/test` "same",
by a rule that assumed both runners work. Round 2's logs showed they do not in SWE-bench's
sympy images: `pytest` is not installed ("command not found", "No module named pytest").
So every pair of the class, in every split and round, is re-decided here from the output
logged right after each side, whatever any similarity says of it: one side that never
started and one that ran the tests is "different"; both ran, or both failed to start the
same way, keeps the rule's "same". `--apply` rewrites those labels in the hand-label files
and the benchmark's pairs files.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_sources import logged_outputs  # noqa: E402

BENCH = ROOT / "tests" / "similarity" / "near_misses"
FILES = {
    BENCH / "pairs.jsonl": [ROOT / "benchmarks" / "near_miss_hand_labels.tsv"],
    BENCH / "pairs_round2.jsonl": [
        ROOT / "benchmarks" / "near_miss_hand_labels_r2_design.tsv",
        ROOT / "benchmarks" / "near_miss_hand_labels_r2_holdout.tsv",
    ],
}
PYTEST = re.compile(r"(^|[\s/])(pytest|py\.test)\b|-m\s+pytest\b")
BIN_TEST = re.compile(r"(^|\s)(\./)?bin/test\b")
NOT_STARTED = re.compile(r"pytest: command not found|No module named '?pytest'?")
STARTED = re.compile(r"test process starts|test session starts")


def in_class(row: dict) -> bool:
    a, b = row["a"].get("command", ""), row["b"].get("command", "")
    return bool(
        (PYTEST.search(a) and BIN_TEST.search(b)) or (PYTEST.search(b) and BIN_TEST.search(a))
    )


def state(output: str) -> str:
    if NOT_STARTED.search(output):
        return "not started"
    return "ran" if STARTED.search(output) else "unknown"


def verdict(row: dict) -> tuple[bool, str] | None:
    sides = [state(str(out)) for out in logged_outputs(row["source"])]
    if "unknown" in sides:
        return None
    if sides[0] == sides[1]:
        return True, f"logged outputs: both sides {sides[0]} (pytest vs bin/test on the same files)"
    pytest_side = "A" if PYTEST.search(row["a"].get("command", "")) else "B"
    return False, (
        f"logged outputs: pytest is not installed ({pytest_side} never starts) where bin/test "
        "runs the same files' tests"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="rewrite the hand-label files")
    args = parser.parse_args()
    for pairs, label_files in FILES.items():
        decided = {}
        for line in pairs.open(encoding="utf-8"):
            row = json.loads(line)
            if not in_class(row):
                continue
            found = verdict(row)
            print(f"{pairs.name} {row['split']:<8}{row['key']} was {row['same']!s:<6}-> {found}")
            if found is not None:
                decided[row["key"]] = found
        if args.apply:
            # the pairs file too: round 1's build needs execution results not kept in the repo
            out = []
            for line in pairs.open(encoding="utf-8"):
                row = json.loads(line)
                if row["key"] in decided:
                    row["same"], row["reason"] = decided[row["key"]]
                    row["label_by"] = "log"
                    line = json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
                out.append(line)
            pairs.write_text("".join(out), encoding="utf-8")
            for path in label_files:
                rows = list(csv.reader(path.open(encoding="utf-8", newline=""), delimiter="\t"))
                for row in rows:
                    if row and row[0] in decided:
                        row[1], row[2] = ("1" if decided[row[0]][0] else "0"), decided[row[0]][1]
                text = "".join("\t".join(row) + "\n" for row in rows)  # as written: unquoted
                path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
