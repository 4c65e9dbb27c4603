"""Apply the adjudicated labels (`near_miss_adjudications.tsv`) to the benchmark's pairs files.

Run: `python benchmarks/near_miss_adjudicate.py [--apply]`. Without `--apply` it lists what
would change. `near_miss_build.py` applies the same file when a round is rebuilt; this
rewrites the built files in place, since round 1's execution cache is not kept in the repo.
Rounds rebuilt from fetched sources (`.bench/near_miss_rK/pairs_roundK.jsonl`, not committed)
are read too when they are there: round 11 has an adjudicated label.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_build import ADJUDICATED, adjudicate, hand_labels  # noqa: E402

BENCH = ROOT / "tests" / "similarity" / "near_misses"
REBUILT = ROOT / ".bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="rewrite the pairs files")
    args = parser.parse_args()
    adjudicated = hand_labels(ADJUDICATED)
    seen = set()
    rebuilt = sorted(REBUILT.glob("near_miss_r*/pairs_round*.jsonl"))
    for path in sorted(BENCH.glob("pairs*.jsonl")) + rebuilt:
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        out = [adjudicate(row, adjudicated) for row in rows]
        for old, new in zip(rows, out, strict=True):
            if old["key"] in adjudicated:
                seen.add(old["key"])
            if old != new:
                print(f"{path.name} {old['key']} ({old['split']}): {old['same']} -> {new['same']}")
        if args.apply and out != rows:
            text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in out)
            path.write_text(text, encoding="utf-8")
    if missing := sorted(set(adjudicated) - seen):
        raise SystemExit(
            f"adjudicated keys in no pairs file: {missing} (rounds 7-11 are read only when "
            "rebuilt under .bench: README, 'The near-miss benchmark')"
        )


if __name__ == "__main__":
    sys.exit(main())
