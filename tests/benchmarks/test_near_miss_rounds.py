"""Rerunning a round's draw gives the sample its labels were written for."""

from __future__ import annotations

import csv
from pathlib import Path

from benchmarks.near_miss_round10 import labelled_keys

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _keys(name: str) -> set[str]:
    with (BENCH / name).open(encoding="utf-8") as fh:
        rows = csv.reader(fh, delimiter="\t")
        return {row[0] for row in rows if row and not row[0].startswith("#")}


def test_round_10_excludes_earlier_rounds_labels_but_not_its_own_or_later() -> None:
    seen = labelled_keys()
    for later in ("r10_design", "r10_holdout", "r11_design", "r11_holdout"):
        own = _keys(f"near_miss_hand_labels_{later}.tsv")
        assert own and not own & seen, later  # counting them would draw another sample
    assert _keys("near_miss_hand_labels_r9_holdout.tsv") <= seen
    assert _keys("near_miss_hand_labels.tsv") <= seen
