"""`build_clients`: which SDKs a run loads, and which batch backend a batched role gets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.config import load_config
from builder.llm.batch.anthropic_batch import AnthropicBatch
from builder.llm.batch.openai_batch import OpenAIBatch
from builder.llm.factory import build_clients

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, teacher: dict[str, object], agent: dict[str, object]) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(
        json.dumps(
            {
                "inputs": [{"path": str(tmp_path)}],
                "teacher": {"model": "t", "base_url": "http://127.0.0.1:9/v1", **teacher},
                "agent": {"model": "a", "base_url": "http://127.0.0.1:9/v1", **agent},
                "output": {"dir": str(tmp_path / "out")},
            }
        )
    )
    return path


def test_openai_run_loads_neither_sdk(tmp_path: Path) -> None:
    """The Anthropic SDK costs 1-2 s of CPU to import and the OpenAI SDK about 0.5 s: a run of
    OpenAI-compatible endpoints on the direct transport (the default) needs neither."""
    cfg = _config(tmp_path, {"provider": "openai"}, {"provider": "openai"})
    code = (
        "import sys; from pathlib import Path; from builder.config import load_config; "
        "from builder.llm.factory import build_clients; "
        f"cfg = load_config({str(cfg)!r}); "
        "clients = build_clients(cfg, Path(cfg.output.dir)); clients.close(); "
        "print('anthropic' in sys.modules, 'openai' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert done.stdout.strip() == "False False"


def test_batched_roles_get_their_providers_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    cfg = load_config(
        _config(
            tmp_path,
            {"provider": "anthropic", "batch": True},
            {"provider": "openai", "batch": True},
        )
    )
    clients = build_clients(cfg, tmp_path / "out")
    try:
        assert clients.batch is not None
        assert isinstance(clients.batch.backends["teacher"], AnthropicBatch)
        assert isinstance(clients.batch.backends["agent"], OpenAIBatch)
    finally:
        clients.close()


def test_no_batched_role_means_no_queue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    cfg = load_config(_config(tmp_path, {"provider": "openai"}, {"provider": "anthropic"}))
    clients = build_clients(cfg, tmp_path / "out")
    try:
        assert clients.batch is None
    finally:
        clients.close()
