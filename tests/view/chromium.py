"""Headless Chromium (Debian's `chromium`, installed by `make test-deps`) for the view tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_or_skip() -> str:
    """The browser's path; skips (saying how to install it) where it is not installed."""
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if not found:
        pytest.skip(
            "headless Chromium is not installed and could not be installed here: run "
            "`make test-deps` as root (apt-get install -y chromium) to enable this test"
        )
    return found


def run_chromium(
    browser: str, *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """One headless run with a fresh profile (the timeout only guards against a hang)."""
    with tempfile.TemporaryDirectory(prefix="nap-chromium-") as profile:
        return subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}", *args],
            text=True,
            capture_output=True,
            timeout=timeout,
            check=False,
        )


def dump_dom(browser: str, url: str) -> str:
    done = run_chromium(browser, "--virtual-time-budget=5000", "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(browser: str, url: str, path: Path, size: str = "1400,1700") -> Path:
    done = run_chromium(browser, f"--window-size={size}", f"--screenshot={path}", url)
    assert done.returncode == 0 and path.exists(), done.stderr[-2000:]
    return path
