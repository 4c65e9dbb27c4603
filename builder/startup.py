"""Process-start settings for the long commands (`run`, `eval`, `ingest`) in a process the
CLI owns (`builder.cli.entry`): the garbage collector, pyarrow's probe for pandas, and the
exit.

**Collector.** With CPython's default thresholds (700, 10, 10) the bench job
(benchmarks/bench_run.py: 80 trajectories, ~1,600 requests) spent about 1 s of its ~10 CPU
seconds in the collector: ~265 collections while importing the SDKs and pydantic models,
then young collections every 700 allocations of reply parsing, and full collections that
walk every object alive, most of them the ~120,000 that imports made and that never die.
On two cores shared with the endpoint, that CPU slows the request loop. Reference counting
frees almost everything here; the collector is only for cycles, so it can run much less
often and skip the startup heap.

**pandas.** pyarrow's first conversion of a Python list (`pa.array`, `Table.from_pylist`)
asks whether the list is a pandas object, which imports pandas: ~0.4 s of CPU, in a process
that never uses pandas (it is installed for `datasets`). `skip_pandas_probe` lets that first
probe find no pandas; pyarrow still imports it where it is really needed (`to_pandas`,
`from_pandas` retry the import), but after the probe a pandas Series given to `pa.array` is
read as a plain sequence, so only commands that never hand pyarrow pandas objects call it.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import sys
import threading

# Allocations between young collections: cycles still die within a few milliseconds of
# work, while collections become ~30x rarer; each older generation is collected after 20
# collections of the one below (CPython: 10).
YOUNG_THRESHOLD = 20_000
OLDER_THRESHOLDS = (20, 20)


_owned = False  # whether this process was started by the CLI (`process_start`)


def process_start() -> None:
    """At the start of a process the CLI owns (its console script, `python -m builder.cli`):
    fewer collections from here on, and `command_ready` enabled. A program (or a test) that
    calls `builder.cli.main` itself keeps its collector and pyarrow as they were."""
    global _owned
    _owned = True
    collect_less()


def command_ready() -> None:
    """The command's modules are imported and its config loaded: in a process the CLI owns,
    skip pyarrow's pandas probe and freeze the startup heap."""
    if _owned:
        skip_pandas_probe()
        freeze_startup()


def collect_less() -> None:
    """Fewer collections from here on (call at process start, before the heavy imports)."""
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)


def freeze_startup() -> None:
    """Move every object alive now (modules, classes, the loaded config) to the permanent
    generation, so that later full collections stop walking them: call once the command's
    modules are imported, before its work starts. No collection first: at that point it
    would cost ~60 ms to free a few dozen objects."""
    gc.freeze()


class _NoPandas:
    """An import finder (`sys.meta_path`) under which `import pandas` fails. Not derived from
    `importlib.abc.MetaPathFinder`: importing that module costs more than this saves."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ModuleNotFoundError(f"{fullname} is left out of this process", name=fullname)
        return None


def skip_pandas_probe() -> None:
    """Make pyarrow's lazy pandas check come out "no pandas" without importing it (see the
    module docstring); nothing to do when pandas is already imported."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([0])  # the first conversion runs the probe; its answer is kept
    finally:
        sys.meta_path.remove(finder)


def exit_now(code: int) -> None:
    """End a process the CLI owns once its command returned: the exit handlers run (cache
    flushes, logging), the streams are flushed, and then the process leaves without the
    interpreter's teardown of every module and object (~60-100 ms after a run, for nothing).
    With another thread still alive, the normal exit waits for it instead."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's, undocumented
    if threading.active_count() > 1 or run_exit_handlers is None:
        sys.exit(code)
    run_exit_handlers()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing left to say
            code = code or 1
    os._exit(code)
