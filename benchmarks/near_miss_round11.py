"""Draw round 11 of the near-miss benchmark: more of round 10's pool, before any rule from it.

Run: `python benchmarks/near_miss_round11.py` after `near_miss_round10.py` (it reads that
round's `pool.jsonl` and `sample.jsonl`). Writes `.bench/near_miss_r11/sample.jsonl` and
`context_{design,holdout}.md` for the labellers.

Round 10's first look gave recall 1 of 8 on its held-out split, and its design split (3 "same")
was too small to say what the gate misses on pairs further apart or less alike. Round 11 draws
`TOTAL` more pairs of the same pool (run and test, 20 turns, ratio 0.65, none labelled before),
in key (hash) order, at most `PER_RUN` a run counting round 10's, so that its design half gives
evidence to write rules from and its held-out half a measure none of them has seen. Drawn,
split by hash and labelled before any rule changed after round 10.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_round7 import by_category, capped, run_of, write_draw  # noqa: E402

ROUND10 = ROOT / ".bench" / "near_miss_r10"
OUT = ROOT / ".bench" / "near_miss_r11"
TOTAL, PER_RUN = 400, 2


def draw(pool: list[dict], earlier: list[dict]) -> list[dict]:
    """Pairs of the pool not drawn before, in key order, at most PER_RUN a run in all."""
    done = {r["key"] for r in earlier}
    fresh = (r for r in pool if r["key"] not in done)
    return by_category(capped(fresh, PER_RUN, TOTAL, map(run_of, earlier)))


def main() -> None:
    def read(name: str) -> list[dict]:
        return [json.loads(line) for line in (ROUND10 / name).open(encoding="utf-8")]

    pool = read("pool.jsonl")
    picked = draw(pool, read("sample.jsonl"))
    write_draw(OUT, {"sample.jsonl": picked}, picked, pool)


if __name__ == "__main__":
    sys.exit(main())
