"""Agreement of a second, blind labeller with the near-miss benchmark's labels.

Run: `python benchmarks/near_miss_second_labeller.py [--labels FILE.tsv]`, or `--draw
rounds1-4|round5|round6|round7|round9|round10|round11` to write a sample as its labeller saw it (no
label) to `.bench/near_miss_second` (rounds 6, 7 and 9-11 with the messages around each pair,
`roundN.md`, as their first labellers had them).

Every split of every round had one labeller, so nothing said how far the labels themselves can
be trusted. A second labeller relabelled a sample of held-out pairs (every "same" pair of the
mini-swe-agent runs plus 70 "different" ones, in the order of a hash, mixed so the share of
"same" gave nothing away) under LABELS.md alone: no earlier label, no similarity. This prints
raw agreement and Cohen's kappa against the first labels (before adjudication), the 2x2
table, and every pair the two labellers decide differently with both reasons and the label
it has now. The similarity is never run here: a disagreement is settled
from the trajectory, not from what the gate says.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_build import hand_labels  # noqa: E402
from near_miss_round6 import context  # noqa: E402
from near_miss_sources import cached_file  # noqa: E402

BENCH = ROOT / "tests" / "similarity" / "near_misses"
# round 7 is rebuilt, not committed (its source states no licence: near_miss_round7.py)
ROUND7 = ROOT / ".bench" / "near_miss_r7" / "pairs_round7.jsonl"
ROUND9 = ROOT / ".bench" / "near_miss_r9" / "pairs_round9.jsonl"  # the same: no licence
ROUND10 = ROOT / ".bench" / "near_miss_r10" / "pairs_round10.jsonl"  # rounds 1, 7 and 9's
ROUND11 = ROOT / ".bench" / "near_miss_r11" / "pairs_round11.jsonl"  # the same sources
LABELS = Path(__file__).resolve().parent / "near_miss_second_labels.tsv"
# the samples: rounds 1-4 (every "same" and 70 others), round 5 (every "same", 40 others) of
# the mini-swe-agent runs, round 6 (every "same", 27 others) of the OpenHands runs and round 7
# (every "same", 30 others) of the SWE-agent runs, round 9 (every "same", 30 others) of the
# GPT-5-mini runs, rounds 10 and 11 (every "same", 30 others) of all three
SAMPLES = {
    "rounds1-4": (
        [BENCH / "pairs.jsonl", *(BENCH / f"pairs_round{n}.jsonl" for n in (2, 3, 4))],
        70,
        "gruckion/",
    ),
    "round5": ([BENCH / "pairs_round5.jsonl"], 40, "gruckion/"),
    "round6": ([BENCH / "pairs_round6.jsonl"], 27, "All-Hands-AI/"),
    "round7": ([ROUND7], 30, "lgetter/"),
    "round9": ([ROUND9], 30, "RussellRyanH/"),
    "round10": ([ROUND10], 30, ""),
    "round11": ([ROUND11], 30, ""),
}


def _hashed(salt: str, key: str) -> str:
    return hashlib.sha256((salt + key).encode()).hexdigest()


def first_label(row: dict) -> bool:
    """The first labeller's label, before adjudication (every adjudication so far flipped a
    label its second labeller disputed): what a sample was drawn by and is compared with."""
    return row["same"] != row.get("adjudicated", False)


def draw(rounds: list[Path], different: int, source: str) -> list[dict]:
    """Held-out pairs of `rounds` from `source`: every "same", `different` others, mixed."""
    rows = [
        json.loads(line)
        for path in rounds
        for line in path.open(encoding="utf-8")
        if '"holdout"' in line
    ]
    rows = [r for r in rows if r["split"] == "holdout" and r["source"].startswith(source)]
    others = sorted(
        (r for r in rows if not first_label(r)), key=lambda r: _hashed("agree", r["key"])
    )
    picked = [r for r in rows if first_label(r)] + others[:different]
    out = []
    for row in sorted(picked, key=lambda r: _hashed("order", r["key"])):
        path, first, second = cached_file(row["source"])
        out.append(
            {k: row[k] for k in ("key", "category", "a", "b", "source")}
            | {"local_file": str(path), "message_a": first, "message_b": second}
        )
    return out


def kappa(table: Counter[tuple[bool, bool]]) -> float:
    """Cohen's kappa of a 2x2 table keyed (first label, second label)."""
    n = sum(table.values())
    observed = (table[(True, True)] + table[(False, False)]) / n
    first = (table[(True, True)] + table[(True, False)]) / n
    second = (table[(True, True)] + table[(False, True)]) / n
    expected = first * second + (1 - first) * (1 - second)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--draw", choices=sorted(SAMPLES), help="write that sample to label")
    args = parser.parse_args()
    if args.draw:
        out = ROOT / ".bench" / "near_miss_second" / f"{args.draw}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        rows = draw(*SAMPLES[args.draw])
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        print(f"wrote {len(rows)} pairs to {out}")
        if args.draw not in ("rounds1-4", "round5"):  # the rest had the messages around each pair
            text = context([r | {"split": "holdout"} for r in rows])
            out.with_suffix(".md").write_text(text, encoding="utf-8")
        return
    second = hand_labels(args.labels)
    bench = {}
    rebuilt = sorted((ROOT / ".bench").glob("near_miss_r*/pairs_round*.jsonl"))  # if rebuilt
    for path in [*sorted(BENCH.glob("pairs*.jsonl")), *rebuilt]:
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            bench[row["key"]] = row
    missing = [key for key in second if key not in bench]
    if missing:
        raise SystemExit(f"{len(missing)} keys of {args.labels} in no pairs file: {missing[:5]}")
    table: Counter[tuple[bool, bool]] = Counter()
    by_category: Counter[tuple[str, bool]] = Counter()
    differ = []
    for key, (same, reason) in second.items():
        row = bench[key]
        first = first_label(row)
        table[(first, same)] += 1
        by_category[(row["category"], first == same)] += 1
        if first != same:
            differ.append((row, same, reason))
    n = sum(table.values())
    agree = table[(True, True)] + table[(False, False)]
    print(f"{n} pairs relabelled: agreement {agree / n:.3f} ({agree}), kappa {kappa(table):.3f}")
    settled = sum(row["same"] == same for row, same, _ in differ)
    print(f"{len(differ)} disagreements, {settled} settled for the second labeller (adjudicated)")
    print("              second same  second different")
    for first in (True, False):
        name = "first same" if first else "first different"
        print(f"{name:<16}{table[(first, True)]:>11}{table[(first, False)]:>18}")
    for cat in sorted({c for c, _ in by_category}):
        agreed, differed = by_category[(cat, True)], by_category[(cat, False)]
        print(f"  {cat:<10} agree {agreed:>3}  differ {differed:>2}")
    for row, same, reason in differ:
        labels = f"first {first_label(row)}, second {same}, now {row['same']}"
        print(f"\n{row['key']} ({row['category']}: {labels})")
        print(f"  a: {json.dumps(row['a'], ensure_ascii=False)[:200]}")
        print(f"  b: {json.dumps(row['b'], ensure_ascii=False)[:200]}")
        print(f"  now:    {row['reason']}")
        print(f"  second: {reason}")


if __name__ == "__main__":
    sys.exit(main())
