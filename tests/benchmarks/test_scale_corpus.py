"""The scale corpus: the real corpus's shape, counted by the project's own ingest."""

from __future__ import annotations

from pathlib import Path

from benchmarks.scale_corpus import LONG, STEPS, write_corpus
from builder.ingest.parallel import InputSpec, run_ingest


def test_each_trajectory_has_forty_steps_of_which_ten_are_eligible(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 6)
    total = run_ingest([InputSpec(str(corpus))], tmp_path / "out", workers=1).total
    assert (total.trajectories, total.steps, total.eligible) == (6, 6 * STEPS, 6 * LONG)
    assert (STEPS, LONG) == (40, 10)  # 500 trajectories: 20k steps, 5k eligible
    assert total.quarantined == total.duplicates == 0


def test_the_same_seed_writes_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    one = write_corpus(tmp_path / "one", 3)
    two = write_corpus(tmp_path / "two", 3)
    other = write_corpus(tmp_path / "other", 3, seed=5)
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir())
    assert all((one / n).read_bytes() == (two / n).read_bytes() for n in names)
    assert any((one / n).read_bytes() != (other / n).read_bytes() for n in names)


def test_a_smaller_corpus_written_over_a_larger_one_leaves_no_file_behind(tmp_path: Path) -> None:
    write_corpus(tmp_path / "c", 5)
    assert len(list(write_corpus(tmp_path / "c", 2).iterdir())) == 2
