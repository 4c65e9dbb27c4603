"""Agreement of each action similarity with the labelled pairs, and semantic speed.

Run: `.venv/bin/python benchmarks/agreement.py [--threshold 0.75] [--holdout]`. For each table (the
near-miss benchmark, tests/similarity/near_misses/pairs*.jsonl, six rounds pooled, and the
earlier rewrite-based tests/similarity/labelled_pairs.jsonl) prints accuracy, precision and
recall of "same" per similarity and split, then the held-out figures of `semantic` by
category and, where the miner's pool is present, how many of the 10,064 mined near misses it
calls "same", and writes `.bench/agreement.json` with the same figures, the disagreements of
`semantic` on the design splits (held-out misses are counted, never listed: they must not be
used for tuning) and microseconds per semantic comparison, cold and cached.

The held-out splits are read only with `--holdout`: every evaluation of them is a look (the
README counts them per round), so `make bench`, which times the similarity on every run,
sees the design splits alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from builder.similarity.compare import SIMILARITIES, clear_caches  # noqa: E402
from builder.similarity.labelled import LABELS_PATH, agreement, load_pairs, to_action  # noqa: E402

_FOLDER = ROOT / "tests" / "similarity" / "near_misses"
# the six rounds of the near-miss benchmark, pooled
NEAR_MISSES = [
    _FOLDER / "pairs.jsonl",
    *(_FOLDER / f"pairs_round{n}.jsonl" for n in (2, 3, 4, 5, 6)),
]


# every near miss the miner found (`near_miss_mine.py --out .bench/near_miss_r2`), unlabelled
POOL = ROOT / ".bench" / "near_miss_r2" / "pool.jsonl"


def pool_rate(threshold: float) -> dict | None:
    """How many of the mined near misses `semantic` calls "same": what a gate change does to
    the candidates a capable agent's near misses would be. None without the miner's pool."""
    if not POOL.exists():
        return None
    sem, total, same = SIMILARITIES["semantic"], 0, 0
    with POOL.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            total += 1
            same += sem(to_action(row["a"]), to_action(row["b"])) >= threshold
    return {"pairs": total, "same": same, "share": round(same / max(total, 1), 4)}


def timing(pairs: list, repeats: int = 3) -> dict[str, float]:
    """Mean microseconds per semantic call: cold (all caches cleared) and warm."""
    sem = SIMILARITIES["semantic"]
    cold = []
    for _ in range(repeats):
        clear_caches()
        start = time.perf_counter()
        for p in pairs:
            sem(p.a, p.b)
        cold.append((time.perf_counter() - start) / len(pairs))
    start = time.perf_counter()
    for _ in range(repeats):
        for p in pairs:
            sem(p.a, p.b)
    warm = (time.perf_counter() - start) / (len(pairs) * repeats)
    return {"cold_us_per_pair": round(min(cold) * 1e6, 1), "warm_us_per_pair": round(warm * 1e6, 1)}


def table_report(name: str, pairs: list, threshold: float) -> dict:
    """The figures of one labelled table, printed and returned."""
    report: dict = {"pairs": len(pairs), "same": sum(p.same for p in pairs)}
    print(f"== {name}: {len(pairs)} labelled pairs ({report['same']} same), θ {threshold}")
    print(f"{'similarity':<12}{'accuracy':>10}{'precision':>11}{'recall':>8}")
    splits = {"all": pairs}
    for pair in pairs:
        splits.setdefault(pair.split, []).append(pair)
    for split, subset in splits.items():
        print(f"-- {split}: {len(subset)} pairs ({sum(p.same for p in subset)} same)")
        for sim_name, sim in SIMILARITIES.items():
            result = agreement(sim, subset, threshold)
            report.setdefault(split, {})[sim_name] = result.as_dict()
            acc, prec, rec = result.accuracy, result.precision, result.recall
            print(f"{sim_name:<12}{acc:>10.3f}{prec:>11.3f}{rec:>8.3f}")
    sem = SIMILARITIES["semantic"]
    holdout = splits.get("holdout", [])
    if holdout:
        print(f"-- holdout by category, semantic at {threshold}")
        print(
            f"{'category':<12}{'pairs':>6}{'same':>6}{'accuracy':>10}{'precision':>11}{'recall':>8}"
        )
    for category in sorted({p.category for p in holdout}):
        subset = [p for p in holdout if p.category == category]
        result = agreement(sem, subset, threshold)
        report.setdefault("holdout_by_category", {})[category] = {
            "pairs": len(subset),
            **result.as_dict(),
        }
        same = sum(p.same for p in subset)
        print(
            f"{category:<12}{len(subset):>6}{same:>6}{result.accuracy:>10.3f}"
            f"{result.precision:>11.3f}{result.recall:>8.3f}"
        )
    report["semantic_disagreements_design"] = [
        {
            "score": round(sem(p.a, p.b), 3),
            "same": p.same,
            "category": p.category,
            "reason": p.reason,
        }
        for p in splits.get("design", [])
        if (sem(p.a, p.b) >= threshold) != p.same
    ]
    report["semantic_misses_holdout"] = sum((sem(p.a, p.b) >= threshold) != p.same for p in holdout)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.75)
    parser.add_argument(
        "--holdout", action="store_true", help="also evaluate the held-out splits (a look)"
    )
    args = parser.parse_args()
    load_before = load_1m()
    report: dict = {"threshold": args.threshold, "holdout_read": args.holdout}
    if not args.holdout:
        print("held-out splits not read (--holdout reads them: each run is a look)")
    every = []
    for name, paths in (("near_misses", NEAR_MISSES), ("labelled_pairs", [LABELS_PATH])):
        pairs = [pair for path in paths for pair in load_pairs(path)]
        pairs = [p for p in pairs if args.holdout or p.split != "holdout"]
        every += pairs
        report[name] = table_report(name, pairs, args.threshold)
    report["timing"] = timing(every)
    report["pool"] = pool_rate(args.threshold)
    if report["pool"]:
        pool = report["pool"]
        share = f"{pool['same']} of {pool['pairs']} ({pool['share']:.2%})"
        print(f"mined near misses called same: {share}")
    print(f"semantic: {report['timing']}")
    print(f"wrote {write('agreement', report, load_before)}")


if __name__ == "__main__":
    main()
