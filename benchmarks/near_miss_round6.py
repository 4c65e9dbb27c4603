"""Draw round 6 of the near-miss benchmark: every near miss of a source new since round 5.

Run: `python benchmarks/near_miss_round6.py [--mirrors /work/.mirror]` after
`fetch github:All-Hands-AI/OpenHands`. Writes `.bench/near_miss_r6/sample.jsonl` (every pair:
the source has three runs, too few to sample from) and, for the labellers,
`context_{design,holdout}.md`: each pair with the messages from its first action to the
output of its second, read through the project's own OpenHands reader.

Rounds 1-5 are mini-swe-agent runs of Python repositories for all but 48 pairs. This round is
OpenHands' CodeAct agent (str_replace_editor and shell calls) on a C code base, so it tests
whether rules written from those runs hold for another harness and language. The miner,
window and ratio are round 1's (`near_miss_mine.py`), and the split is the pair's hash, fixed
here before any label.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_mine import mine  # noqa: E402
from near_miss_sources import REPOS_ROUND6, cached_file  # noqa: E402

from builder.ingest.formats import detect  # noqa: E402
from builder.ingest.formats.source import Source  # noqa: E402
from schemas.trajectories import TrajectoryRecord  # noqa: E402

OUT = ROOT / ".bench" / "near_miss_r6"
BENCH = ROOT / "tests" / "similarity" / "near_misses"
SHOWN = 2500  # characters of each message in context.md


def context(rows: list[dict]) -> str:
    """Markdown: per pair, the messages from its first action to its second's output."""
    by_file: dict[Path, dict[str, list]] = {}
    out = []
    for row in rows:
        local, first, second = cached_file(row["source"])
        traj_id = row["source"].partition("#")[2].rpartition("/")[0]
        if local not in by_file:
            source = Source(local)
            adapter = detect(source)
            by_file[local] = {
                str(t.native_id or t.trajectory_id): list(t.messages)
                for t in adapter.load(source)
                if isinstance(t, TrajectoryRecord)
            }
        messages = by_file[local][traj_id]
        out.append(f"## pair {row['key']} ({row['category']}, {row['split']})\n")
        out.append(f"A: `{json.dumps(row['a'], ensure_ascii=False)}`\n")
        out.append(f"B: `{json.dumps(row['b'], ensure_ascii=False)}`\n")
        for index in range(first, min(second + 2, len(messages))):
            message = messages[index]
            text = message.content or ""
            if message.role == "assistant":
                calls = [c.arguments for c in message.tool_calls] if message.tool_calls else []
                text = f"{text}\n(calls: {json.dumps(calls, ensure_ascii=False)})"
            cut = text if len(text) <= SHOWN else text[:SHOWN] + f"\n[... {len(text)} chars]"
            out.append(f"### m{index} {message.role}\n```\n{cut}\n```\n")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    rows = mine(args.mirrors, OUT / "sources", 10, 0.8, 6000, repos=REPOS_ROUND6, shared=())
    earlier = [BENCH / "pairs.jsonl", *(BENCH / f"pairs_round{n}.jsonl" for n in range(2, 6))]
    done = {json.loads(line)["key"] for path in earlier for line in path.open()}  # rounds 1-5
    rows = sorted((r for r in rows if r["key"] not in done), key=lambda r: r["key"])
    OUT.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (OUT / "sample.jsonl").write_text(text, encoding="utf-8")
    for split in ("design", "holdout"):  # one file a split: each has its own labeller
        of_split = [r for r in rows if r["split"] == split]
        (OUT / f"context_{split}.md").write_text(context(of_split), encoding="utf-8")
    counts = Counter((r["category"], r["split"]) for r in rows)
    print(f"{len(rows)} pairs drawn")
    for cat in sorted({c for c, _ in counts}):
        print(f"{cat:<10}{counts[(cat, 'design')]:>5}{counts[(cat, 'holdout')]:>5}")


if __name__ == "__main__":
    sys.exit(main())
