"""Process-start settings of the long commands: the collector set by the CLI and the startup
objects frozen; pyarrow used without importing pandas."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder import cli, startup
from builder.cli import app
from builder.startup import OLDER_THRESHOLDS, YOUNG_THRESHOLD, collect_less, freeze_startup
from tests.paths import REPO, SAMPLES


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


def test_the_cli_entry_sets_them_before_the_command(
    restored_gc: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.set_threshold(700, 10, 10)
    seen = []

    def command() -> int:
        seen.append(gc.get_threshold())
        return 0

    def leave(code: int) -> None:  # the real one ends the process (see the test below)
        raise SystemExit(code)

    monkeypatch.setattr(app, "main", command)
    monkeypatch.setattr(startup, "_owned", False)
    monkeypatch.setattr(startup, "exit_now", leave)
    with pytest.raises(SystemExit):
        cli.entry()
    assert seen == [(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)]


EXITING = """
import atexit, sys, threading, time
from pathlib import Path
from builder.startup import exit_now
out = Path(sys.argv[1])
atexit.register(lambda: (out / "atexit").write_text("ran"))
if sys.argv[2] == "thread":
    def late() -> None:
        time.sleep(0.3)
        (out / "thread").write_text("finished")
    threading.Thread(target=late).start()
sys.stdout.write("buffered, no newline")
exit_now(3)
"""


@pytest.mark.parametrize("other_thread", [False, True])
def test_exit_now_runs_exit_handlers_flushes_and_keeps_the_code(
    tmp_path: Path, other_thread: bool
) -> None:
    mode = "thread" if other_thread else "alone"
    done = subprocess.run(
        [sys.executable, "-c", EXITING, str(tmp_path), mode],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert (tmp_path / "atexit").read_text() == "ran"
    # a live thread is waited for (the normal exit), never cut off
    assert (tmp_path / "thread").exists() == other_thread


def test_calling_main_leaves_the_process_alone(restored_gc: None, tmp_path: Path) -> None:
    gc.set_threshold(700, 10, 10)
    source = SAMPLES / "chat-messages" / "textstats.jsonl"
    assert cli.main(["ingest", str(source), "--out", str(tmp_path), "--workers", "1"]) == 0
    assert gc.get_threshold() == (700, 10, 10)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (module state such as pyarrow's pandas probe is global)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )


def test_pyarrow_works_without_importing_pandas_and_pandas_still_loads_when_asked() -> None:
    done = run_python(
        "import sys\n"
        "from builder.startup import skip_pandas_probe\n"
        "skip_pandas_probe()\n"
        "import pyarrow as pa\n"
        "table = pa.Table.from_pylist([{'a': 1, 'b': 'x'}, {'a': 2, 'b': None}])\n"
        "assert table.column('a').to_pylist() == [1, 2]\n"
        "assert 'pandas' not in sys.modules, 'probe imported pandas'\n"
        "frame = table.to_pandas()\n"
        "assert 'pandas' in sys.modules and list(frame['a']) == [1, 2]\n"
        "print('ok')\n"
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_an_ingest_never_imports_pandas(tmp_path: Path) -> None:
    source = SAMPLES / "chat-messages" / "textstats.jsonl"
    done = run_python(
        "import atexit, sys\n"
        "from builder import cli\n"
        "atexit.register(lambda: print('pandas' in sys.modules))\n"
        f"sys.argv = ['nap-builder', 'ingest', {str(source)!r}, '--out', {str(tmp_path)!r}]\n"
        "cli.entry()\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
    rows = pq.read_table(tmp_path / "trajectories").num_rows
    assert rows == len(source.read_text().splitlines()) > 0
