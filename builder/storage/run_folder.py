"""A run whose `output.dir` is an object store: pull the mirror, run on it, push it back."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from builder.config import PipelineConfig
from builder.storage.mirror import bind, pull, push_all
from builder.storage.uri import redacted

log = logging.getLogger(__name__)


@contextmanager
def mirrored(cfg: PipelineConfig) -> Iterator[PipelineConfig]:
    """The config pointed at the local mirror, with the store's objects pulled first (so a
    resume on another machine sees the finished shards) and the mirror pushed after, also
    when the run stops or fails (what is finished is then on the store)."""
    uri = cfg.output.dir
    local = cfg.local_output_dir()
    local.mkdir(parents=True, exist_ok=True)
    bind(local, uri)
    pull(local, uri)
    log.info("output %s: working on the local mirror %s", redacted(uri), local)
    output = cfg.output.model_copy(update={"dir": str(local)})
    failed = False
    try:
        yield cfg.model_copy(update={"output": output})
    except BaseException:
        failed = True
        raise
    finally:
        try:
            push_all(local, uri)
        except OSError as exc:
            if not failed:
                raise
            log.error("could not push %s to %s: %s", local, redacted(uri), exc)
