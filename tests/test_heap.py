"""The collector settings of long commands: set by the CLI, and startup objects frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from builder import cli
from builder.heap import OLDER_THRESHOLDS, YOUNG_THRESHOLD, collect_less, freeze_startup


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_collect_less_raises_the_thresholds(restored_gc: None) -> None:
    collect_less()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    assert gc.get_threshold()[0] > 700  # CPython's default


def test_freeze_moves_live_objects_out_of_collections(restored_gc: None) -> None:
    gc.unfreeze()
    alive = len(gc.get_objects())
    freeze_startup()
    assert gc.get_freeze_count() >= alive * 0.9
    assert len(gc.get_objects()) < alive * 0.1


def test_the_cli_sets_them_before_anything_else(
    restored_gc: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.set_threshold(700, 10, 10)
    seen = []

    def parser() -> None:
        seen.append(gc.get_threshold())
        raise SystemExit(0)

    monkeypatch.setattr(cli, "build_parser", parser)
    with pytest.raises(SystemExit):
        cli.main([])
    assert seen == [(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)]
