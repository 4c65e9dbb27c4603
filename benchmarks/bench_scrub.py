"""Scrub throughput against a floor: one plain regex pass over the same text.

The text is the real sample trajectories (shared samples and builder/samples), with the
scrubbing corpus (tests/scrub/corpus.py: 62 credential kinds, 23 look-alikes) mixed in at
about 2% of the bytes. The floor is `str.lower()` plus one `finditer` of a simple token regex
over every file: a scan any scrubber must at least make. With `--baseline-rev REV` the
scrubber at that git revision (builder/scrub.py or builder/scrub/) is timed on the same text.

    python benchmarks/bench_scrub.py [--mb 8] [--baseline-rev ad816e6]

Prints MB/s and the ratio to the floor for each scrubber, and writes .bench/scrub.json.
Target: the current scrubber within 1.5x of the baseline's ratio to the floor.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from tests.paths import SAMPLES, SHARED  # noqa: E402
from tests.scrub.corpus import LOOKALIKES, SEEDED  # noqa: E402

BENCH = ROOT / ".bench"
FLOOR = re.compile(r"[A-Za-z0-9_\-]{20,}")


def texts(megabytes: float) -> list[str]:
    """Real trajectory files, repeated to `megabytes`, with the corpus mixed in."""
    files = sorted(p for root in (SHARED, SAMPLES) for p in root.rglob("*") if p.is_file())
    real = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    seeded = "\n".join([t.format(v=v) for _, v, t in SEEDED] + LOOKALIKES)
    out: list[str] = []
    while sum(map(len, out)) < megabytes * 1e6:
        for text in real:
            out.append(f"{text}\n#{len(out)}")  # each text unique: the Scrubber's memo of
            if len(out) % 5 == 0:  # seen texts must not make repeats free
                out.append(f"{seeded}\n#{len(out)}")
    return out


def floor(corpus: list[str]) -> None:
    for text in corpus:
        text.lower()
        for _ in FLOOR.finditer(text):
            pass


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def scrubber_at(rev: str, tmp: Path) -> Any:
    """The Scrubber class of `builder.scrub` at git revision `rev`, imported from a copy."""
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, "builder/scrub.py",
         "builder/scrub"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    package = tmp / f"scrub_{rev}"
    for name in listing:
        dest = package / ("__init__.py" if name == "builder/scrub.py" else Path(name).name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:{name}"], capture_output=True, check=True
        ).stdout.decode()
        dest.write_text(source.replace("builder.scrub", package.name))
    sys.path.insert(0, str(tmp))
    return importlib.import_module(package.name).Scrubber


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--baseline-rev", default=None)
    args = parser.parse_args()
    load_before = load_1m()
    corpus = texts(args.mb)
    size = sum(len(t) for t in corpus) / 1e6
    floor_s = best_of(lambda: floor(corpus))
    result: dict[str, Any] = {"mb": round(size, 2), "floor_mb_s": round(size / floor_s, 1)}
    from builder.scrub import Scrubber

    scrubbers = {"current": Scrubber}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline_rev:
            scrubbers[args.baseline_rev] = scrubber_at(args.baseline_rev, Path(tmp))
        for name, cls in scrubbers.items():
            fresh: list[Any] = []  # a new Scrubber per pass: nothing remembered from the last

            def one_pass(cls: Any = cls, fresh: list[Any] = fresh) -> None:
                fresh[:] = [cls()]
                [fresh[0].scrub(t) for t in corpus]

            seconds = best_of(one_pass)
            scrubber = fresh[0]
            result[name] = {
                "mb_s": round(size / seconds, 2),
                "x_floor": round(seconds / floor_s, 1),
                "kinds_found": len(scrubber.counts),
            }
    if args.baseline_rev:
        base = result[args.baseline_rev]["x_floor"]
        result["current_vs_baseline"] = round(result["current"]["x_floor"] / base, 2)
    write("scrub", result, load_before)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
