"""Draw round 10 of the near-miss benchmark: run and test pairs further apart or less alike.

Run: `python benchmarks/near_miss_round10.py [--mirrors /work/.mirror]` after `fetch` of
`gruckion/mini-swe-agent`, `lgetter/swe-agent-trajectory-analysis` and
`RussellRyanH/CSCI-635-LiveSWE-Agent`. Writes `.bench/near_miss_r10/pool.jsonl`,
`sample.jsonl` and `context_{design,holdout}.md` for the labellers, as round 7 does.

After round 9 the gate met the bar overall but not for `run` and `test`, each resting on 10-14
held-out "same" pairs, and every run or test near miss of the three big sources (round 1's
miner: 10 turns, difflib ratio 0.8) was labelled. This round widens the miner to 20 turns and
ratio 0.65 on the same sources and keeps only run and test pairs no earlier round labelled:
every pair of ratio ≥ 0.8 (alike, but more than 10 turns apart) and, in key (hash) order, pairs
of ratio 0.65-0.8 up to `TOTAL`, at most `PER_RUN` a run. The split is the pair's hash, fixed
here before any label; nothing of the runs is committed (two sources state no licence).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_mine import mine  # noqa: E402
from near_miss_round7 import by_category, capped, run_of, write_draw  # noqa: E402
from near_miss_sources import REPOS, REPOS_ROUND7, REPOS_ROUND9  # noqa: E402

OUT = ROOT / ".bench" / "near_miss_r10"
WINDOW, MIN_RATIO, ALIKE = 20, 0.65, 0.8
TOTAL, PER_RUN = 240, 2
CATEGORIES = ("run", "test")
LATER = re.compile(r"_r(?:1\d|[2-9]\d)_")  # label files of round 10 and after


def labelled_keys() -> set[str]:
    """Keys of every pair a round before this one labelled (committed tables and label files).
    Rounds 10 and later are left out: their labels came after this draw, and counting them
    would draw another sample on a rerun."""
    keys: set[str] = set()
    for path in (ROOT / "tests" / "similarity" / "near_misses").glob("pairs*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                keys.add(json.loads(line)["key"])
    for path in (ROOT / "benchmarks").glob("near_miss_hand_labels*.tsv"):
        if LATER.search(path.name):
            continue
        with path.open(encoding="utf-8") as fh:
            keys.update(row[0] for row in csv.reader(fh, delimiter="\t") if row)
    return keys


def draw(rows: list[dict]) -> list[dict]:
    """Every alike pair, then less alike ones in key order, at most PER_RUN a run."""
    alike = [r for r in rows if r["ratio"] >= ALIKE]
    others = (r for r in rows if r["ratio"] < ALIKE)
    rest = capped(others, PER_RUN, TOTAL - len(alike), map(run_of, alike))
    return by_category(alike + rest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    seen = labelled_keys()
    cache = OUT / "sources"
    rows = [
        r
        for repos in (REPOS[:1], REPOS_ROUND7, REPOS_ROUND9)
        for r in mine(args.mirrors, cache, WINDOW, MIN_RATIO, 6000, repos=repos, shared=())
        if r["category"] in CATEGORIES and r["key"] not in seen
    ]
    picked = draw(rows)
    write_draw(OUT, {"sample.jsonl": picked, "pool.jsonl": rows}, picked, rows)


if __name__ == "__main__":
    sys.exit(main())
