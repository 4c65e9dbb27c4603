"""Draw round 3 of the near-miss benchmark: pairs whose logged outputs agree.

Run: `python benchmarks/near_miss_round3.py [--round 4|5]` after `near_miss_mine.py --out
.bench/near_miss_r2 ...` (it reads that pool and the trajectory files it cached).

Rounds 1 and 2 drew near misses by text alone, and 3-10% of them are "same": too few a
category to measure recall there (0-12 "same" pairs per held-out category). Round 3 draws
from the pairs of mini-swe-agent runs whose two logged outputs (the message after each
action) share at least three quarters of their lines, a signal of the environment, not of
any similarity: the same action shows the same output unless the files changed between,
while different actions with the same output are the hardest "different" pairs there are.
Per category up to a quota, at most two pairs a trajectory (all of a category smaller than
twice its quota), in hash order; the split is the pair's hash as before, fixed here before
any label. Writes `.bench/near_miss_r3/sample.jsonl`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_sources import logged_outputs  # noqa: E402

POOL = ROOT / ".bench" / "near_miss_r2" / "pool.jsonl"
BENCH = ROOT / "tests" / "similarity" / "near_misses"
DONE = [BENCH / n for n in ("pairs.jsonl", "pairs_round2.jsonl")]
# round 4 (`--round 4`): the categories round 3 left with 2-5 held-out "same" pairs (run,
# test), from pairs whose outputs share at least a quarter of their lines (round 3 took all
# above three quarters). Round 5 (`--round 5`): every run and test pair left, whatever its
# outputs: an agent re-runs the same test after an edit, so the outputs of the same action
# differ there, and rounds 3-4 left those "same" pairs behind
LATER_ROUNDS = {
    4: {"quotas": {"run": 80, "test": 110}, "min_shared": 0.25},
    5: {"quotas": {"run": 400, "test": 400}, "min_shared": 0.0},
}
QUOTAS = {
    "read": 45,
    "search": 45,
    "python_c": 35,
    "other": 35,
    "test": 35,
    "run": 30,
    "mixed": 25,
    "list": 20,
    "edit": 15,
    "chain": 15,
}
_NUMBERED = re.compile(r"^\s*\d+[:\-\t ]")


def lines_of(output: str) -> Counter[str]:
    """Output lines, line-number prefixes and blank lines aside."""
    body = re.sub(r"</?output>|<returncode>.*?</returncode>", "", output)
    return Counter(_NUMBERED.sub("", line).strip() for line in body.splitlines() if line.strip())


def shared(a: str, b: str) -> float:
    la, lb = lines_of(a), lines_of(b)
    if not la and not lb:
        return 1.0 if a.strip() == b.strip() else 0.0
    return sum((la & lb).values()) / max(sum((la | lb).values()), 1)


def outputs(row: dict) -> tuple[str, str] | None:
    """The two logged outputs of a mini-swe-agent pair (only those logs are read)."""
    if not row["source"].startswith("gruckion/"):
        return None
    a, b = logged_outputs(row["source"])
    return (a, b) if isinstance(a, str) and isinstance(b, str) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", type=int, choices=(3, 4, 5), default=3)
    number = parser.parse_args().round
    later = LATER_ROUNDS.get(number)
    quotas = later["quotas"] if later else QUOTAS
    min_shared = later["min_shared"] if later else 0.75
    out_dir = ROOT / ".bench" / f"near_miss_r{number}"
    done_files = [*DONE, *(BENCH / f"pairs_round{n}.jsonl" for n in range(3, number))]
    done = {json.loads(line)["key"] for path in done_files for line in path.open(encoding="utf-8")}
    by_cat: dict[str, list[dict]] = defaultdict(list)
    rows = [json.loads(line) for line in POOL.open(encoding="utf-8")]
    rows.sort(key=lambda r: r["source"])  # one trajectory file at a time
    for row in rows:
        if row["key"] in done or row["category"] not in quotas:
            continue
        pair = outputs(row)
        share = shared(*pair) if pair is not None else 0.0
        if pair is not None and share >= min_shared:
            by_cat[row["category"]].append(row | {"output_shared": round(share, 3)})
    picked = []
    for cat, quota in quotas.items():
        taken: Counter[str] = Counter()
        cap = 2 if len(by_cat[cat]) >= 2 * quota else quota  # a small category: all of it
        drawn = 0
        for row in sorted(by_cat[cat], key=lambda r: r["key"]):
            if drawn >= quota:
                break
            traj = row["source"].rsplit("/m", 1)[0]
            if taken[traj] < cap:
                taken[traj] += 1
                picked.append(row)
                drawn += 1
    out_dir.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked)
    (out_dir / "sample.jsonl").write_text(text, encoding="utf-8")
    counts = Counter((r["category"], r["split"]) for r in picked)
    found = sum(len(v) for v in by_cat.values())
    print(f"{found} pairs with agreeing outputs, {len(picked)} drawn")
    for cat in quotas:
        design, held = counts[(cat, "design")], counts[(cat, "holdout")]
        print(f"{cat:<10}{len(by_cat[cat]):>6}{design:>5}{held:>5}")


if __name__ == "__main__":
    sys.exit(main())
