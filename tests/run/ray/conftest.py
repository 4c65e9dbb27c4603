"""One local Ray (2 CPUs, no dashboard) for the whole test session, shut down at the end."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """The running Ray's GCS address; runs with engine=ray use it instead of starting one."""
    import ray  # the `ray` extra, installed by `make setup` and the README's test command

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
