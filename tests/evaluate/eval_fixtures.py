"""A real run and eval over the scripted endpoint on the project samples (CLI subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.paths import REPO, SAMPLES
from tests.run.nap_server import run_config

CLI = [sys.executable, "-m", "builder.cli"]
SPECS = ["unchanged", "omit", "rule:head_tail", "rule:dedupe_repeated_lines", "teacher"]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [*CLI, *args], text=True, capture_output=True, timeout=timeout, env=env, check=False
    )


def write_config(
    tmp: Path, base_url: str, name: str = "out", corpus: Path = SAMPLES, **extra: Any
) -> Path:
    """The runner tests' scripted config, with `head_tail` as a rule candidate."""
    extra.setdefault("teacher", {"rules": ["head_tail"]})
    path = tmp / f"{name}.yaml"
    path.write_text(run_config(corpus, base_url, tmp / name, **extra))
    return path


def eval_args(config: Path, specs: list[str] = SPECS, *more: str) -> list[str]:
    args = ["eval", str(config)]
    for spec in specs:
        args += ["--compressor", spec]
    return [*args, *more]


def read_report(out: Path, folder: str) -> dict[str, Any]:
    return json.loads((out / "eval" / folder / "report.json").read_text())
