"""Draw round 12 of the near-miss benchmark: SWE-agent 0.x on Java, five models never seen.

Run: `python benchmarks/near_miss_round12.py [--mirrors /work/.mirror]` after
`fetch github:multi-swe-bench/experiments`. Writes `.bench/near_miss_r12/pool.jsonl` (every
near miss), `sample.jsonl` (the pairs to label) and `context_{design,holdout}.md` for the
labellers, as round 7 does.

After stop 44 every held-out split of rounds 1-11 had been looked at 2 to 23 times, and the
last rule (the passing-run rule) was written from known held-out pairs. This round is a first
look at the gate as it ships (`302ff60`) on runs no rule was written from: SWE-agent 0.x (its
own `open`/`goto`/`edit`/`search_file` commands) with GPT-4o, GPT-4o-mini, DeepSeek-Chat-V2,
DeepSeek-Coder-V2 and Doubao-Pro on Multi-SWE-bench's Java tasks. Round 1's miner (10 turns,
difflib ratio 0.8); every pair of a category with few pairs, `PER_RUN` a run of the others, at
most `TOTAL`, in key (hash) order; split by the pair's hash here, before any label. Nothing of
the runs is committed (no licence stated).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_round7 import by_category, capped, draw_round  # noqa: E402
from near_miss_sources import REPOS_ROUND12  # noqa: E402

OUT = ROOT / ".bench" / "near_miss_r12"
TOTAL, PER_RUN = 320, 1  # a pair a run and category: spread over runs and models


def draw(rows: list[dict]) -> list[dict]:
    """At most PER_RUN pairs of each category a run, in key order, up to a share of TOTAL
    a category (an equal share; what a small category leaves goes to the others in order)."""
    pools = {
        c: capped((r for r in rows if r["category"] == c), PER_RUN)
        for c in sorted({r["category"] for r in rows})
    }  # `capped` with a limit is the same rows cut short
    picked: list[dict] = []
    for n, cat in enumerate(sorted(pools, key=lambda c: len(pools[c]))):
        picked += pools[cat][: (TOTAL - len(picked)) // (len(pools) - n)]
    return by_category(picked)


def main() -> None:
    draw_round(__doc__ or "", OUT, REPOS_ROUND12, draw)


if __name__ == "__main__":
    sys.exit(main())
