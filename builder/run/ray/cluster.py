"""Connect to a Ray cluster, or start a local Ray for the run, and stop only what we started."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from builder.config.run_settings import ExecutionConfig
from builder.errors import ConfigError

log = logging.getLogger(__name__)


def import_ray() -> object:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("execution.engine=ray needs Ray: pip install 'nap-builder[ray]'") from exc
    return ray


@contextmanager
def ray_session(execution: ExecutionConfig) -> Iterator[None]:
    """Ray for the duration of a run. An already initialised Ray (a test session, a notebook)
    is used as is; otherwise `ray_address`, then RAY_ADDRESS, then a new local Ray."""
    import_ray()
    import ray

    if ray.is_initialized():
        yield
        return
    address = execution.ray_address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        # A local Ray's workers inherit this process's environment (PYTHONPATH included), and
        # a runtime_env would keep them off the pre-started worker processes: each actor
        # would then wait ~1-2 s for a fresh one.
        log.info("ray: starting a local Ray (%s CPUs)", execution.num_cpus or "all")
        ray.init(num_cpus=execution.num_cpus, include_dashboard=False, log_to_driver=True)
    else:
        # workers on other nodes import `builder` from the same place as this process
        env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
        log.info("ray: connecting to %s", address)
        ray.init(address=address, runtime_env={"env_vars": env} if env else None)
    try:
        yield
    finally:
        ray.shutdown()
