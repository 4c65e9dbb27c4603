"""Peak memory of ingesting one large file: a JSON array of trajectories (the shape of a dump),
read element by element (`builder.ingest.json_stream`), against a floor and a stated bound.

The file is one `[...]` of distinct replicas of the real mini-swe-agent and SWE-agent samples
(a marker per copy), written to .bench/large/ (reused when the size matches). A fresh process
ingests it (one worker, as one file is one task) and the kernel's peak RSS of that process is
compared with the floor, the same command on the untouched sample, measured in the same run:

    bound = floor + 192 MiB + 8 x the largest element's JSON size + 4 KiB x trajectories

192 MiB covers the fixed buffers (three shard writers flushing at 24 MiB of estimated Arrow
size each, the scrubber's memo of 8M characters); one element, its record and its steps are
held at once (8x its JSON text, generously); the per-trajectory term is the bookkeeping that
finds duplicates across tasks (one small `Copy` per kept trajectory). Nothing else grows
with the file. Before streaming, the same file was read whole and decoded: about twice its
size, plus the parsed value.

    python benchmarks/bench_large_input.py [--gb 2.0] [--raw] [--with-hostile]

`--raw` skips scrubbing at ingest (memory is the same; time is shorter). `--with-hostile`
ingests, through the CLI with 2 workers, a folder holding the large file beside every hostile
input of `tests/ingest/test_ingest_hostile_round2.py` (an odd name, BOM and UTF-16 files, an
array, .xz/.bz2/.zip/.tar inputs, a zip bomb, nested archives, NUL lines, good files), checks
the exit code and the quarantine rows, and holds the largest process to the same bound.
Writes .bench/large_input.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_ingest import JSON_FILES, SHARED  # noqa: E402
from benchmarks.machine import load_1m, write  # noqa: E402

BENCH = ROOT / ".bench"
MIB = 2**20
_INGEST = (
    "import sys; from pathlib import Path; "
    "from builder.ingest.parallel import InputSpec, run_ingest; "
    "from builder.scrub.settings import ScrubSettings; "
    "s = run_ingest([InputSpec(sys.argv[1])], Path(sys.argv[2]), workers=1, "
    "scrub=ScrubSettings(at_ingest=sys.argv[3] == 'scrub')); "
    "print(s.total.trajectories, s.total.steps, s.total.quarantined)"
)
_MEASURE = (  # a fresh parent per measurement: RUSAGE_CHILDREN is the peak of its children
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stdout.strip())"
)


def generate(path: Path, target: int) -> tuple[int, int]:
    """Write the array (streaming); returns (file bytes, largest element's JSON bytes)."""
    sources = [(json.loads(p.read_text()), fn) for p, fn in JSON_FILES]
    largest = max(len(json.dumps(doc)) for doc, _ in sources)
    if path.exists() and abs(path.stat().st_size - target) < target * 0.02:
        return path.stat().st_size, largest + 64
    path.parent.mkdir(parents=True, exist_ok=True)
    written, k = 1, 0
    with path.open("w") as out:
        out.write("[")
        while written < target:
            for doc, mark in sources:
                text = json.dumps(mark(json.loads(json.dumps(doc)), k))
                out.write(("," if k or doc is not sources[0][0] else "") + text)
                written += len(text) + 1
            k += 1
        out.write("]")
    return path.stat().st_size, largest + 64  # + the replica marker


def peak_rss(path: Path, out: Path, scrub: bool) -> tuple[int, str]:
    mode = "scrub" if scrub else "raw"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-c", _INGEST, str(path), str(out), mode],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    kib, counts = done.stdout.strip().split(" ", 1)
    return int(kib) * 1024, counts


def hostile_folder(big: Path) -> tuple[Path, dict[str, str]]:
    """The round-2 hostile corpus with the large file linked in (no 2 GiB copy)."""
    from tests.ingest.test_ingest_hostile_round2 import _populate

    folder = BENCH / "large" / "folder"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    _, bad = _populate(folder)
    os.link(big, folder / "big-array.json")
    return folder, bad


def peak_rss_cli(folder: Path, out: Path) -> tuple[int, int]:
    """(peak RSS of the largest process, exit code) of `nap-builder ingest folder`."""
    shutil.rmtree(out, ignore_errors=True)
    cli = [sys.executable, "-m", "builder.cli", "ingest", str(folder), "--out", str(out)]
    measure = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, *cli, "--workers", "2"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    kib, code = done.stdout.split()
    return int(kib) * 1024, int(code)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--raw", action="store_true")
    parser.add_argument("--with-hostile", action="store_true")
    args = parser.parse_args()
    load_before = load_1m()
    big = BENCH / "large" / "array.json"
    started = time.perf_counter()
    size, largest = generate(big, int(args.gb * 2**30))
    print(f"{big}: {size / 2**30:.2f} GiB ({time.perf_counter() - started:.0f} s)", flush=True)
    floor_file = BENCH / "large" / "floor" / "sample.traj.json"
    floor_file.parent.mkdir(exist_ok=True)
    floor_file.write_text(
        (SHARED / "swe-agent/marshmallow-code__marshmallow-1867.traj").read_text()
    )
    floor, _ = peak_rss(floor_file, BENCH / "large" / "out-floor", not args.raw)
    started = time.perf_counter()
    peak, counts = peak_rss(big, BENCH / "large" / "out", not args.raw)
    seconds = time.perf_counter() - started
    trajectories = int(counts.split()[0])
    if args.with_hostile:
        folder, bad = hostile_folder(big)
        out = BENCH / "large" / "out-folder"
        peak, code = peak_rss_cli(folder, out)
        import polars as pl

        rows = pl.read_parquet(out / "quarantine" / "*.parquet")
        found = {(p.removeprefix(str(folder) + "/"), k) for p, k in rows.select(
            "source_path", "error_kind").iter_rows()}  # fmt: skip
        counts += f"; folder: exit {code}, bad inputs with their row: "
        counts += f"{sum((n, k) in found for n, k in bad.items())} of {len(bad)}"
    bound = floor + 192 * MIB + 8 * largest + 4096 * trajectories
    result = {
        "file_bytes": size,
        "largest_element_bytes": largest,
        "trajectories_steps_quarantined": counts,
        "scrubbed": not args.raw,
        "seconds": round(seconds, 1),
        "mb_per_s": round(size / 1e6 / seconds, 2),
        "floor_rss_mib": round(floor / MIB, 1),
        "peak_rss_mib": round(peak / MIB, 1),
        "bound_mib": round(bound / MIB, 1),
        "under_bound": peak <= bound,
        "peak_over_file_size": round(peak / size, 3),
    }
    write("large_input", result, load_before)
    for key, value in result.items():
        print(f"{key:>32}: {value}")


if __name__ == "__main__":
    main()
