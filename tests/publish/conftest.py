"""Fixtures of the publish tests: a run output folder and the local Hub stand-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.publish.hub_server import HubServer
from tests.publish.publish_fixtures import EMPTY_REGISTRY, SECRET, TOKEN, make_run_output


@pytest.fixture
def run_output(tmp_path: Path) -> Path:
    """A fresh run output folder with 40 trajectories."""
    return make_run_output(tmp_path)


@pytest.fixture
def run_output_factory() -> Callable[..., Path]:
    """`make_run_output(root, trajectories=40)`, for tests needing several folders."""
    return make_run_output


@pytest.fixture
def seeded_secret() -> str:
    """The secret planted in the run output's text columns."""
    return SECRET


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubServer]:
    """The stand-in, with huggingface_hub's global endpoint pointed at it too (no internet)."""
    import huggingface_hub.constants as constants
    from huggingface_hub.utils import _detect_agent

    with HubServer() as server:
        monkeypatch.setattr(constants, "ENDPOINT", server.endpoint)
        monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "harnesses.json"))
        monkeypatch.setattr(_detect_agent, "_registry", EMPTY_REGISTRY)
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield server
