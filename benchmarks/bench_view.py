"""`nap-builder view` on thousands of steps: file size against the observations it must embed,
and headless-Chromium load time against a one-copy view measured in the same run.

A real run over the scripted endpoint on the project samples is replicated `--copies` times
(trajectory ids suffixed), then viewed.

    python benchmarks/bench_view.py [--copies 400]

Writes .bench/view.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from benchmarks.machine import load_1m, write  # noqa: E402
from builder.view.write import write_view  # noqa: E402
from tests.evaluate.eval_fixtures import cli, write_config  # noqa: E402
from tests.run.nap_server import nap_server  # noqa: E402
from tests.view.chromium import CHROMIUM, FLAGS  # noqa: E402

TABLES = ("trajectories", "steps", "candidates", "references", "judgements", "supervision")


def replicate(src: Path, dest: Path, copies: int) -> None:
    for table in TABLES:
        frame = pl.read_parquet(src / table / "*.parquet")
        parts = [frame.with_columns(pl.col("trajectory_id") + f"-{k:05d}") for k in range(copies)]
        (dest / table).mkdir(parents=True, exist_ok=True)
        pl.concat(parts).write_parquet(dest / table / "part-0000.parquet")


def load_seconds(page: Path) -> float:
    with tempfile.TemporaryDirectory() as profile:
        started = time.perf_counter()
        subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True,
            check=True,
            timeout=600,
        )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=400)
    args = parser.parse_args()
    load_before = load_1m()
    work = ROOT / ".bench" / "view"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with nap_server() as server:
        done = cli("run", str(write_config(work, server.base_url, "one")))
        assert done.returncode == 0, done.stderr
    big = work / "big"
    replicate(work / "one", big, args.copies)
    small_page, small_steps = write_view(work / "one")
    started = time.perf_counter()
    page, steps = write_view(big)
    build = time.perf_counter() - started
    obs = pl.read_parquet(big / "steps" / "*.parquet").filter(pl.col("eligible"))
    obs_bytes = int(obs["observation"].str.len_bytes().sum())
    size = page.stat().st_size
    if os.access(CHROMIUM, os.X_OK):
        small, large = load_seconds(small_page), load_seconds(page)
    else:  # `make test-deps` installs it (as root)
        small = large = float("nan")
    result = {
        "steps": steps,
        "html_bytes": size,
        "observation_bytes": obs_bytes,
        "html_per_observation_byte": size / obs_bytes,
        "build_seconds": build,
        "chromium_load_seconds": large,
        "chromium_load_seconds_one_copy": small,
        "load_ratio_vs_one_copy": large / small,
        "one_copy_steps": small_steps,
    }
    (ROOT / ".bench").mkdir(exist_ok=True)
    write("view", result, load_before)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
