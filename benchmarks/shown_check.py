"""Check what `builder.similarity.shown` derives against what the logs show.

Run: `python benchmarks/shown_check.py PATH ...` (trajectory files or directories, e.g.
`../shared/trajectories .bench/near_miss_env`). For every acting turn that is one read whose
output the log shows and the reads logged before it settle, it derives that output from them
(only reads between, as `environment.facts` carries them) without reading the turn's own
output, and compares the two as the labels do (normalised lines). A derivation the log
contradicts is printed with its source; the counts are printed at the end, split into repeats
of the same command and narrower reads (the derivations that are not a repeat).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.errors import NapError  # noqa: E402
from builder.ingest.formats import detect  # noqa: E402
from builder.ingest.formats.source import Source  # noqa: E402
from builder.similarity.no_match import changes_nothing, printed_nothing  # noqa: E402
from builder.similarity.shown import (  # noqa: E402
    carried,
    logged_reads,
    normalised,
    output_of,
    shows_line_ends,
)
from builder.steps.log_turns import log_turns  # noqa: E402
from schemas.trajectories import TrajectoryRecord  # noqa: E402


def check_file(path: Path, counts: Counter[str]) -> None:
    try:
        source = Source(path)
        adapter = detect(source)
        records = list(adapter.load(source))
    except (NapError, OSError, ValueError) as exc:
        counts["unreadable files"] += 1
        print(f"skip {path}: {exc}", file=sys.stderr)
        return
    for traj in records:
        if not isinstance(traj, TrajectoryRecord):
            continue
        _, turns = log_turns(traj, adapter)
        kept: tuple = ()
        for i, turn in enumerate(turns):
            printed = turn.observation if turn.printed is None else turn.printed
            own = logged_reads(turn.units, printed)
            one = len(turn.units) == 1 and len(printed) <= 9000 and not printed_nothing(printed)
            derived = output_of(turn.units[0], kept) if one and kept else None
            if derived is not None:
                lines = own[0].lines if own else tuple(printed.strip("\n").split("\n"))
                if lines and lines[0].startswith("Here's the result of running `cat -n`"):
                    lines = lines[1:]  # the editor's header
                origin = "a whole file" if any(s.kind == "file" for s in kept) else "a read"
                same = bool(own) and any(s.patterns == own[0].patterns for s in kept)
                kind = f"{'repeat' if same else 'other read'} from {origin}"
                marked = shows_line_ends(lines)  # `| cat -A`: a presentation the key leaves out
                agree = marked or normalised(derived[1]) == normalised(lines)
                verdict = (
                    "line ends marked (cat -A), not compared"
                    if marked
                    else (f"{kind} {'agrees' if agree else 'CONTRADICTED'}")
                )
                counts[verdict] += 1
                if not agree:
                    name = traj.native_id or traj.trajectory_id
                    print(
                        f"{path} {name} turn {i}: {turn.units[0]}\n  derived {derived[1][:5]}"
                        f"\n  logged {lines[:5]}"
                    )
            kept = carried(kept, own)
            if not all(changes_nothing(u.kind, u.key) for u in turn.units):
                kept = ()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", type=Path, nargs="+")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    for root in args.paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for file in files:
            if file.suffix in (".json", ".jsonl", ".traj"):
                counts["files"] += 1
                check_file(file, counts)
    for name, n in sorted(counts.items()):
        print(f"{name}: {n}")


if __name__ == "__main__":
    main()
