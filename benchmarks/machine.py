"""The machine a benchmark ran on, stamped into its JSON: a ratio to a floor means little
without the CPU model, the core count and how busy the machine was (issue 31 asks for the CPU
model and the load beside every verdict). Every bench writes its figures through `write`.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / ".bench"


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The first `model name` of /proc/cpuinfo (x86), else what `platform` knows."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_1m() -> float:
    """The 1-minute load average: read before a bench starts, and again by `stamp`."""
    return round(os.getloadavg()[0], 2)


def stamp(load_before: float) -> dict[str, Any]:
    """CPU model, cores, the 1-minute load before the bench and now (after it), and when it
    finished (a verdict table may mix fresh figures with an old file's)."""
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "loadavg_1m_before": load_before,
        "loadavg_1m_after": load_1m(),
        "finished": time.strftime("%Y-%m-%d %H:%M"),
    }


def write(name: str, figures: dict[str, Any], load_before: float) -> Path:
    """`.bench/<name>.json` with the machine stamped in (key `machine`); returns its path."""
    figures["machine"] = stamp(load_before)
    BENCH.mkdir(exist_ok=True)
    path = BENCH / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2) + "\n")
    return path
