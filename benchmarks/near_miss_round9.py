"""Draw round 9 of the near-miss benchmark: the near misses of a new model.

Run: `python benchmarks/near_miss_round9.py [--mirrors /work/.mirror]` after
`fetch github:RussellRyanH/CSCI-635-LiveSWE-Agent`. Writes `.bench/near_miss_r9/pool.jsonl`
(every near miss), `sample.jsonl` (the pairs to label) and `context_{design,holdout}.md` for
the labellers, as round 7 does.

Stop 40 gave the gate the sandbox from the log and re-decided two labels; every held-out split
had been looked at 6 to 19 times by then. This round is the first look at that gate: GPT-5-mini
under mini-swe-agent with the Live-SWE-agent configuration, a model no earlier round has. Every
near miss is drawn (round 1's miner, window and ratio) but reads, of which `READS` are, split
by the pair's hash here, before any label. No licence is stated for the runs: nothing of them
is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_round7 import by_category, capped, draw_round  # noqa: E402
from near_miss_sources import REPOS_ROUND9  # noqa: E402

OUT = ROOT / ".bench" / "near_miss_r9"
READS = 40  # of 540 read pairs (mostly `nl | sed -n` windows): a sample, at most 2 a run


def draw(rows: list[dict]) -> list[dict]:
    """Every pair but reads; READS of those, at most 2 a run, in key (hash) order."""
    reads = capped((r for r in rows if r["category"] == "read"), 2, READS)
    return by_category([r for r in rows if r["category"] != "read"] + reads)


def main() -> None:
    draw_round(__doc__ or "", OUT, REPOS_ROUND9, draw)


if __name__ == "__main__":
    sys.exit(main())
