"""Resident memory of a process tree, sampled from /proc while it runs, with the job's progress
read at the same moments, so memory can be read against how far the job had got.

A run is a parent and its forked workers; the kernel's `ru_maxrss` gives the peak of one
process only, and never says *when*. Summing VmRSS over the tree counts pages shared by fork
in every process that maps them: an upper bound, the safe side for a memory target.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    """At `seconds` after the sampler started: `done` units of progress, `rss` bytes (tree)."""

    seconds: float
    done: int
    rss: int


def tree(root: int) -> list[int]:
    """`root` and all its descendants, through every thread's `children` list (a pool may
    fork from a thread other than the main one)."""
    pids = [root]
    try:
        tasks = list(Path(f"/proc/{root}/task").iterdir())
    except OSError:
        return pids
    for task in tasks:
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            pids += tree(int(child))
    return pids


def rss(pid: int) -> int:
    """VmRSS of `pid` in bytes (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """Samples the tree under `root` (default: this process) every `every` seconds, with
    `progress()` read beside each sample; keeps the peaks of the sum and of one process."""

    def __init__(
        self,
        root: int | None = None,
        every: float = 0.1,
        progress: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.root = os.getpid() if root is None else root
        self.every = every
        self.progress = progress
        self.samples: list[Sample] = []
        self.peak_total = 0
        self.peak_single = 0
        self._halt = threading.Event()
        self._t0 = time.perf_counter()

    def sample(self) -> None:
        sizes = [rss(pid) for pid in tree(self.root)]
        done = self.progress() if self.progress else 0
        self.samples.append(Sample(time.perf_counter() - self._t0, done, sum(sizes)))
        self.peak_total = max(self.peak_total, sum(sizes))
        self.peak_single = max([self.peak_single, *sizes])

    def run(self) -> None:
        self._t0 = time.perf_counter()
        while not self._halt.wait(self.every):
            self.sample()

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def watching(self, root: int) -> RssSampler:
        """This sampler, set on the tree under `root`, as a context manager (for a process
        that is spawned after the sampler is made)."""
        self.root = root
        return self

    def __enter__(self) -> RssSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def window_peaks(samples: list[Sample], checkpoints: list[int]) -> dict[int, int | None]:
    """For each checkpoint, the largest tree RSS among the samples taken on the way to it:
    from the previous checkpoint (the first window starts at the first finished unit, so the
    ingest before it is not counted) up to, not including, the checkpoint. A window ends
    before its checkpoint because the last one is the end of the job, where the workers
    exit and the tree shrinks; the peak of a window, not one sample in it, because one
    sample may fall between a collection and the next allocation. None: no sample there."""
    peaks: dict[int, int | None] = {}
    low = 1
    for high in checkpoints:
        inside = [s.rss for s in samples if low <= s.done < high]
        peaks[high] = max(inside) if inside else None
        low = high
    return peaks
