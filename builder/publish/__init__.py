"""Publishing a run as a Hugging Face dataset: layout, card, upload.

`build_dataset_folder` (layout.py) writes the folder with its card (card.py); `upload`
(upload.py) makes the Hub repo equal to it in one commit; `publish` (command.py) is the CLI
command; `merge_runs` makes several rounds' run folders one. Exports load lazily, so the
config can import `licences` without pyarrow datasets.

Reads: `supervision`, `preferences`, `candidates`, with `trajectories` and `judgements` for
provenance, `report.json`, of one run folder or several (rounds). Writes: a dataset folder
(`data/<config>/<split>-*.parquet`, `README.md`, `report.json`, `statistics.json`) or a Hub
repo.
Entry point: `builder.publish.command.publish`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "DEFAULT_SPLITS": "builder.publish.splits",
    "split_of": "builder.publish.splits",
    "LayoutSummary": "builder.publish.layout",
    "build_dataset_folder": "builder.publish.layout",
    "UploadReport": "builder.publish.upload",
    "upload": "builder.publish.upload",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'builder.publish' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
