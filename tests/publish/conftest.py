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
    """The stand-in (accepting only TOKEN), with huggingface_hub and `datasets` pointed at it.

    HF_TOKEN holds the token; the stored-login file points into tmp_path (empty), so no token
    of the machine can be picked up.
    """
    import datasets.config
    import huggingface_hub.constants as constants
    from huggingface_hub import HfFileSystem
    from huggingface_hub.utils import _detect_agent

    with HubServer(token=TOKEN) as server:
        monkeypatch.setattr(constants, "ENDPOINT", server.endpoint)
        template = server.endpoint + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        monkeypatch.setattr(datasets.config, "HF_ENDPOINT", server.endpoint)
        datasets_url = server.endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}"
        monkeypatch.setattr(datasets.config, "HUB_DATASETS_URL", datasets_url)
        HfFileSystem.clear_instance_cache()  # an instance keeps the endpoint it was made with
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
        monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-home" / "ds")
        monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
        monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "hf-home" / "st"))
        monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "harnesses.json"))
        monkeypatch.setattr(_detect_agent, "_registry", EMPTY_REGISTRY)
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield server
        HfFileSystem.clear_instance_cache()
