"""Draw rounds 7 and 8 of the near-miss benchmark: the run and test near misses of two new models.

Run: `python benchmarks/near_miss_round7.py [--mirrors /work/.mirror]` after
`fetch github:lgetter/swe-agent-trajectory-analysis`. Writes `.bench/near_miss_r7/pool.jsonl`
(every near miss), `sample.jsonl` (the pairs to label) and, for the labellers,
`context_{design,holdout}.md` (each pair with the messages from its first action to the output
of its second, read through the project's own SWE-agent reader). `--round 8` writes the same
files to `.bench/near_miss_r8/` for every run and test pair round 7 left (its cap per run).

After round 6, the per-category bar failed only in `run` (precision, 6 held-out "same" pairs)
and `test` (recall, 8), each on one or two pairs, and every run and test near miss of the
earlier sources had been labelled (round 5). This round draws them from SWE-agent 1.x runs of
two other models (SWE-agent-LM-32B, Claude 4 Sonnet) on SWE-bench Verified: another harness
and other agents than the mini-swe-agent runs the rules were written from. The miner, window
and ratio are round 1's, at most `--per-trajectory` pairs a run (hash order), and the split is
the pair's hash, fixed here before any label. Its source states no licence, so its pairs are
not committed: `near_miss_build.py` writes them to `.bench/near_miss_r7/pairs_round7.jsonl`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_mine import mine  # noqa: E402
from near_miss_round6 import context  # noqa: E402
from near_miss_sources import REPOS_ROUND7  # noqa: E402

OUT = ROOT / ".bench" / "near_miss_r7"
CATEGORIES = ("run", "test")


def run_of(row: dict) -> str:
    """The trajectory a mined pair comes from (its source without the message indices)."""
    return row["source"].rsplit("/m", 1)[0]


def capped(
    rows: Iterable[dict], per_run: int, limit: int | None = None, taken: Iterable[str] = ()
) -> list[dict]:
    """Rows in key (hash) order, at most `per_run` a run counting the runs in `taken` (drawn
    before), at most `limit` in all: how every round from 7 on draws from its pool."""
    counts = Counter(taken)
    out: list[dict] = []
    for row in sorted(rows, key=lambda r: r["key"]):
        if limit is not None and len(out) >= limit:
            break
        if counts[run_of(row)] < per_run:
            counts[run_of(row)] += 1
            out.append(row)
    return out


def by_category(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["category"], r["key"]))


def draw(rows: list[dict], per_trajectory: int) -> list[dict]:
    """The rows of CATEGORIES, at most `per_trajectory` a run, in key (hash) order."""
    return by_category(capped((r for r in rows if r["category"] in CATEGORIES), per_trajectory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--per-trajectory", type=int, default=4)
    parser.add_argument("--round", type=int, choices=(7, 8), default=7)
    args = parser.parse_args()
    rows = mine(args.mirrors, OUT / "sources", 10, 0.8, 6000, repos=REPOS_ROUND7, shared=())
    picked = draw(rows, args.per_trajectory)
    out = OUT
    if args.round == 8:  # the rest: round 7's cap per run left these out
        taken = {r["key"] for r in picked}
        picked = draw([r for r in rows if r["key"] not in taken], len(rows))
        out = OUT.with_name("near_miss_r8")
    files = {"sample.jsonl": picked} | ({"pool.jsonl": rows} if args.round == 7 else {})
    write_draw(out, files, picked, rows)  # round 8 draws from round 7's pool: written once


def draw_round(doc: str, out: Path, repos: tuple, draw: Callable[[list[dict]], list[dict]]) -> None:
    """A round at round 1's miner settings (10 turns, ratio 0.8): mine `repos` from the
    mirrors, draw, and write the sample, the pool and the labellers' context (rounds 9, 12)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    rows = mine(args.mirrors, out / "sources", 10, 0.8, 6000, repos=repos, shared=())
    picked = draw(rows)
    write_draw(out, {"sample.jsonl": picked, "pool.jsonl": rows}, picked, rows)


def write_draw(
    out: Path, files: dict[str, list[dict]], picked: list[dict], rows: list[dict]
) -> None:
    """The drawn pairs and pool as JSONL, a context file a split for its labeller, and counts."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data)
        (out / name).write_text(text, encoding="utf-8")
    for split in ("design", "holdout"):  # one file a split: each has its own labeller
        of_split = [r for r in picked if r["split"] == split]
        (out / f"context_{split}.md").write_text(context(of_split), encoding="utf-8")
    pool = Counter(r["category"] for r in rows)
    counts = Counter((r["category"], r["split"]) for r in picked)
    print(f"{len(rows)} near misses, {len(picked)} drawn")
    for cat in sorted(pool):
        print(f"{cat:<10}{pool[cat]:>7}{counts[(cat, 'design')]:>5}{counts[(cat, 'holdout')]:>5}")


if __name__ == "__main__":
    sys.exit(main())
