"""Ingest throughput and peak memory on a generated corpus of real sample trajectories.

The corpus replicates the shared samples (SWE-smith messages, SWE-agent, mini-swe-agent,
OpenHands resolver) with a unique marker per copy, so every copy is a distinct trajectory.
It is generated once into .bench/corpus (reused when large enough).

    python benchmarks/bench_ingest.py [--gb 2.0] [--workers 2]

Prints MB/s, trajectories/s and peak RSS (whole process tree, sampled from /proc) and writes
.bench/ingest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.ingest import InputSpec, run_ingest  # noqa: E402

SHARED = ROOT.parent / "shared" / "trajectories"
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


class RssSampler(threading.Thread):
    """Peak resident memory of this process and all its children (from /proc, every 0.1 s)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_total = 0
        self.peak_single = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.1):
            sizes = [_rss(pid) for pid in _tree(os.getpid())]
            self.peak_total = max(self.peak_total, sum(sizes))
            self.peak_single = max([self.peak_single, *sizes])

    def stop(self) -> None:
        self._halt.set()
        self.join()


def _tree(root: int) -> list[int]:
    pids = [root]
    try:
        children = Path(f"/proc/{root}/task/{root}/children").read_text().split()
    except OSError:
        return pids
    for child in children:
        pids += _tree(int(child))
    return pids


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    corpus = BENCH / "corpus"
    started = time.perf_counter()
    size = generate(corpus, int(args.gb * 1e9))
    print(f"corpus: {size / 1e9:.2f} GB in {corpus} ({time.perf_counter() - started:.0f} s)")
    out = BENCH / "ingest-out"
    shutil.rmtree(out, ignore_errors=True)
    sampler = RssSampler()
    sampler.start()
    started = time.perf_counter()
    summary = run_ingest([InputSpec(str(corpus))], out, workers=args.workers)
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
        "peak_rss_total_mib": round(sampler.peak_total / 2**20, 1),
        "peak_rss_single_process_mib": round(sampler.peak_single / 2**20, 1),
    }
    BENCH.mkdir(exist_ok=True)
    (BENCH / "ingest.json").write_text(json.dumps(result, indent=2))
    for key, value in result.items():
        print(f"{key:>28}: {value}")
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
