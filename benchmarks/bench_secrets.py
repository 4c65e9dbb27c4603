"""The secrets benchmark: recall over credential kinds and look-alikes redacted.

Each kind of `tests/scrub/kinds.py` (built from the vendor's documented token format, in the
text it leaks through) counts as found when no 16-character stretch of its value survives
scrubbing (a value cut in half is a leak, not a find); each look-alike counts as redacted
when scrubbing changes a byte of it. The kinds held out by `split_of` are reported apart;
their misses are counted, never listed.

    python benchmarks/bench_secrets.py

Writes .bench/secrets.json. Targets: recall >= 0.98 over the kinds, <= 2 look-alikes redacted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from builder.scrub import Scrubber  # noqa: E402
from tests.scrub.kinds import evaluate  # noqa: E402


def main() -> None:
    load_before = load_1m()
    started = time.perf_counter()
    result = evaluate(Scrubber())
    result["seconds"] = round(time.perf_counter() - started, 3)
    write("secrets", result, load_before)
    print(
        f"recall {result['recall']:.3f} over {result['kinds']} kinds "
        f"(design {result['recall_design']:.3f}, held out {result['recall_heldout']:.3f} "
        f"of {result['heldout_kinds']}); look-alikes redacted "
        f"{result['lookalikes_redacted']} of {result['lookalikes']} "
        f"(false-positive rate {result['false_positive_rate']:.3f})"
    )
    if result["missed_design"]:
        print("missed (design):", ", ".join(result["missed_design"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
