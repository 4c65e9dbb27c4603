"""Process-tree memory sampled beside progress, and read per window of progress."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from benchmarks.tree_memory import RssSampler, Sample, rss, tree, window_peaks

MIB = 2**20


def _samples(*rows: tuple[int, int]) -> list[Sample]:
    return [Sample(0.2 * k, done, mib * MIB) for k, (done, mib) in enumerate(rows)]


def test_each_checkpoint_gets_the_peak_on_the_way_to_it() -> None:
    samples = _samples((100, 500), (300, 520), (900, 510), (1000, 530), (1500, 560), (4800, 600))
    peaks = window_peaks(samples, [1000, 2000, 5000])
    assert peaks == {1000: 520 * MIB, 2000: 560 * MIB, 5000: 600 * MIB}


def test_the_ingest_before_the_first_step_and_the_exit_after_the_last_are_left_out() -> None:
    samples = _samples((0, 900), (0, 950), (40, 600), (120, 610), (200, 300))  # 200: workers gone
    peaks = window_peaks(samples, [40, 80, 200])
    assert peaks[40] is None  # only the ingest (done 0) came before 40 steps
    assert peaks[80] == 600 * MIB
    assert peaks[200] == 610 * MIB  # not the 300 MiB of the exiting tree


def test_a_window_without_samples_has_no_figure() -> None:
    assert window_peaks(_samples((10, 100), (5000, 100)), [1000, 2000, 5000]) == {
        1000: 100 * MIB,
        2000: None,
        5000: None,
    }


# a child that starts a grandchild (as the run forks its workers) and says both are up
PARENT = """
import subprocess, sys
script = "import time; print('up', flush=True); time.sleep(30)"
grandchild = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
grandchild.stdout.readline()
print(grandchild.pid, flush=True)
grandchild.wait()
"""


def test_the_tree_holds_children_and_grandchildren_and_their_memory() -> None:
    child = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    grandchild = 0
    try:
        assert child.stdout is not None
        grandchild = int(child.stdout.readline())
        assert {child.pid, grandchild} <= set(tree(os.getpid()))
        assert rss(grandchild) > MIB  # a running interpreter
    finally:
        if grandchild:
            os.kill(grandchild, signal.SIGKILL)
        child.kill()
        child.wait()
    assert rss(child.pid) == 0


def test_the_sampler_reads_progress_beside_each_sample() -> None:
    ticks = iter(range(1000))
    with RssSampler(every=0.01, progress=lambda: next(ticks)).watching(os.getpid()) as sampler:
        time.sleep(0.2)
    assert len(sampler.samples) >= 3
    assert [s.done for s in sampler.samples] == list(range(len(sampler.samples)))
    assert sampler.peak_total >= max(s.rss for s in sampler.samples) > 10 * MIB
