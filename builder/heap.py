"""Garbage-collector settings for the long commands (`run`, `eval`).

With CPython's default thresholds (700, 10, 10) the bench job (benchmarks/bench_run.py: 80
trajectories, ~1,600 requests) spent about 1 s of its ~10 CPU seconds in the collector:
~265 collections while importing the SDKs and pydantic models, then young collections every
700 allocations of reply parsing, and full collections that walk every object alive, most of
them the ~120,000 that imports made and that never die. On two cores shared with the
endpoint, that CPU slows the request loop. Reference counting frees almost everything here;
the collector is only for cycles, so it can run much less often and skip the startup heap.
"""

from __future__ import annotations

import gc

# Allocations between young collections: cycles still die within a few milliseconds of
# work, while collections become ~30x rarer. Older generations keep their ratios but run
# less often with them.
YOUNG_THRESHOLD = 20_000
OLDER_THRESHOLDS = (20, 20)


def collect_less() -> None:
    """Fewer collections from here on (call at process start, before the heavy imports)."""
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)


def freeze_startup() -> None:
    """Move every object alive now (modules, classes, the loaded config) to the permanent
    generation, so that later full collections stop walking them: call once the command's
    modules are imported, before its work starts. No collection first: at that point it
    would cost ~60 ms to free a few dozen objects."""
    gc.freeze()
