"""Ingest throughput and peak memory on a generated corpus of real sample trajectories.

The corpus replicates the shared samples (SWE-smith messages, SWE-agent, mini-swe-agent,
OpenHands resolver) with a unique marker per copy, so every copy is a distinct trajectory.
It is generated once into .bench/corpus (reused when large enough).

    python benchmarks/bench_ingest.py [--gb 2.0] [--workers 2] [--raw]
    python benchmarks/bench_ingest.py --single-observation-mb 200

Prints MB/s, trajectories/s and peak RSS (whole process tree, sampled from /proc) and writes
.bench/ingest.json. The tables are scrubbed at ingest, as by default; `--raw` measures the
ingest without it. The replicas share most of their text, which the scrubber's memo answers
at once: the scrubbing cost on unique text is `bench_scrub.py`'s. `--single-observation-mb`
instead measures one trajectory whose one observation is that large: peak RSS of an ingest
subprocess against the 1 GiB target, next to the floor of the same subprocess ingesting the
untouched sample (measured in the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_1m, write  # noqa: E402
from benchmarks.tree_memory import RssSampler  # noqa: E402
from builder.ingest.parallel import InputSpec, run_ingest  # noqa: E402
from builder.scrub.settings import ScrubSettings  # noqa: E402

SHARED = ROOT.parent / "shared" / "trajectories"
if not SHARED.is_dir():  # a git worktree sits one level deeper than the main checkout
    SHARED = ROOT.parents[1] / "shared" / "trajectories"
BENCH = ROOT / ".bench"


def _mark_messages(doc: dict[str, Any], key: str, k: int) -> None:
    messages = doc[key]
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] += f"\n[replica {k}]"
            return


def _mini(doc: Any, k: int) -> Any:
    doc["instance_id"] = f"{doc.get('instance_id')}-r{k}"
    _mark_messages(doc, "messages", k)
    return doc


def _swe_agent(doc: Any, k: int) -> Any:
    for message in doc["history"]:
        if message.get("role") == "user" and not message.get("is_demo"):
            if isinstance(message.get("content"), str):
                message["content"] += f"\n[replica {k}]"
            break
    return doc


def _chat_line(doc: Any, k: int) -> Any:
    doc["instance_id"] = f"{doc.get('instance_id')}-r{k}"
    _mark_messages(doc, "messages", k)
    return doc


def _resolver_line(doc: Any, k: int) -> Any:
    doc["instance_id"] = f"{doc.get('instance_id')}-r{k}"
    first = doc["history"][0]
    item = first[0] if isinstance(first, list) else first
    item["content"] = str(item.get("content", "")) + f" [replica {k}]"
    return doc


JSON_FILES: list[tuple[Path, Callable[[Any, int], Any]]] = [
    (SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json", _mini),
    (SHARED / "swe-agent/marshmallow-code__marshmallow-1867.traj", _swe_agent),
    (SHARED / "swe-agent/pydicom__pydicom-1458.traj", _swe_agent),
]
JSONL_FILES: list[tuple[Path, Callable[[Any, int], Any]]] = [
    (SHARED / "swe-smith-messages/ft_xml_example.jsonl", _chat_line),
    (SHARED / "openhands-v0/resolver/output.jsonl", _resolver_line),
]


def generate(dest: Path, target_bytes: int) -> int:
    """Write replicas until `target_bytes`; JSONL replicas go 200 copies to a file."""
    dest.mkdir(parents=True, exist_ok=True)
    written = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    if written >= target_bytes:
        return written
    shutil.rmtree(dest)
    dest.mkdir(parents=True)
    json_texts = [(p.read_text(), fn, p.name) for p, fn in JSON_FILES]
    jsonl_texts = [(p.read_text().splitlines(), fn, p.stem) for p, fn in JSONL_FILES]
    k = 0
    written = 0
    while written < target_bytes:
        folder = dest / f"batch-{k // 200:05d}"
        folder.mkdir(exist_ok=True)
        for text, fn, name in json_texts:
            path = folder / f"r{k}-{name}"
            path.write_text(json.dumps(fn(json.loads(text), k)))
            written += path.stat().st_size
        if k % 200 == 0:
            for lines, fn, stem in jsonl_texts:
                path = folder / f"{stem}-{k}.jsonl"
                with path.open("w") as out:
                    for j in range(200):
                        for line in lines:
                            out.write(json.dumps(fn(json.loads(line), k * 1000 + j)) + "\n")
                written += path.stat().st_size
        k += 1
    return written


MEMORY_TARGET = 2**30
_INGEST_ONE = (
    "import sys; from pathlib import Path; "
    "from builder.ingest.parallel import InputSpec, run_ingest; "
    "s = run_ingest([InputSpec(sys.argv[1])], Path(sys.argv[2]), workers=1); "
    "print(s.total.trajectories, s.total.steps, s.total.quarantined)"
)


_MEASURE = (  # a fresh parent per measurement: RUSAGE_CHILDREN is the peak of its children
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stdout.strip())"
)


def _peak_rss_of_ingest(path: Path, out: Path) -> tuple[int, str]:
    """Peak RSS (bytes) of a fresh process ingesting `path`, from the kernel's own count."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-c", _INGEST_ONE, str(path), str(out)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    kib, counts = done.stdout.strip().split(" ", 1)
    return int(kib) * 1024, counts


def single_observation(megabytes: int) -> None:
    """One mini-swe-agent trajectory with one observation of `megabytes` MB of text lines."""
    load_before = load_1m()
    sample = SHARED / "mini-swe-agent/django__django-16255/django__django-16255.traj.json"
    folder = BENCH / "single-observation"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    floor_file = folder / "floor" / sample.name
    floor_file.parent.mkdir()
    shutil.copy(sample, floor_file)
    line = "".join(f"{k:07d} some log output that goes on and on\n" for k in range(1000))
    payload = line * (megabytes * 10**6 // len(line))
    doc = json.loads(sample.read_text())
    doc["instance_id"] = "single-observation"
    doc["messages"][3]["content"] = f"<returncode>0</returncode>\n<output>\n{payload}</output>"
    big = folder / "big" / "big.traj.json"
    big.parent.mkdir()
    big.write_text(json.dumps(doc))
    del doc, payload
    started = time.perf_counter()
    peak, counts = _peak_rss_of_ingest(big, folder / "out-big")
    seconds = time.perf_counter() - started
    floor, _ = _peak_rss_of_ingest(floor_file, folder / "out-floor")
    result = {
        "observation_mb": megabytes,
        "file_bytes": big.stat().st_size,
        "trajectories_steps_quarantined": counts,
        "seconds": round(seconds, 1),
        "peak_rss_mib": round(peak / 2**20, 1),
        "floor_rss_mib": round(floor / 2**20, 1),
        "peak_over_target": round(peak / MEMORY_TARGET, 3),
        "peak_over_file_size": round(peak / big.stat().st_size, 2),
        "under_1_gib": peak < MEMORY_TARGET,
    }
    write("ingest_single_observation", result, load_before)
    for key, value in result.items():
        print(f"{key:>30}: {value}")
    shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--single-observation-mb", type=int, default=None)
    parser.add_argument("--raw", action="store_true", help="no scrubbing at ingest")
    args = parser.parse_args()
    if args.single_observation_mb:
        single_observation(args.single_observation_mb)
        return
    load_before = load_1m()
    corpus = BENCH / "corpus"
    started = time.perf_counter()
    size = generate(corpus, int(args.gb * 1e9))
    print(f"corpus: {size / 1e9:.2f} GB in {corpus} ({time.perf_counter() - started:.0f} s)")
    out = BENCH / "ingest-out"
    shutil.rmtree(out, ignore_errors=True)
    sampler = RssSampler()
    sampler.start()
    started = time.perf_counter()
    scrub = ScrubSettings(at_ingest=not args.raw)
    summary = run_ingest([InputSpec(str(corpus))], out, workers=args.workers, scrub=scrub)
    seconds = time.perf_counter() - started
    sampler.stop()
    total = summary.total
    result = {
        "corpus_bytes": summary.bytes_read,
        "seconds": round(seconds, 2),
        "mb_per_s": round(summary.bytes_read / 1e6 / seconds, 2),
        "trajectories": total.trajectories,
        "trajectories_per_s": round(total.trajectories / seconds, 1),
        "steps": total.steps,
        "eligible": total.eligible,
        "quarantined": total.quarantined,
        "workers": args.workers,
        "scrubbed_at_ingest": not args.raw,
        "peak_rss_total_mib": round(sampler.peak_total / 2**20, 1),
        "peak_rss_single_process_mib": round(sampler.peak_single / 2**20, 1),
    }
    write("ingest", result, load_before)
    for key, value in result.items():
        print(f"{key:>28}: {value}")
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
