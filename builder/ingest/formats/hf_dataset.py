"""`hf-dataset`: message-list datasets read with 🤗 `datasets`, one trajectory per row, streamed.

Sources:
- a Parquet (or Arrow) file;
- a local folder: written by `save_to_disk` (a `Dataset` or a `DatasetDict`), or holding
  Parquet / JSON Lines data files (the Hub layout, e.g. `data/train-*.parquet`);
- a Hub id, when `Source.options["hub"]` is set (`True`: the path is the id; a string: the id).
  Nothing is downloaded when offline: with `HF_HUB_OFFLINE` / `HF_DATASETS_OFFLINE` set, or when
  the Hub (`HF_ENDPOINT`) does not answer within `hub_timeout` seconds, loading fails at once
  with an `InputError` naming the id.

Options (`Source.options`, all optional):
- `messages` (default `"messages"`): the column holding the message list (a list of dicts, or
  its JSON text); `id` (default `"instance_id"`): the native id column;
- `role_key` / `content_key` (default `"role"` / `"content"`): the keys inside each message,
  e.g. `{"messages": "conversations", "role_key": "from", "content_key": "value"}` for ShareGPT
  rows (whose `human` / `gpt` roles read as `user` / `assistant`);
- `model`, `resolved`, `tools`: columns holding the agent model name, the resolved flag (a bool
  or 0/1) and the tool schemas (default `tools`);
- `preset`: the column layout of a known Hub dataset (`builder.ingest.hub_inputs`); without it
  and without a `messages` option, a dataset whose first row has a known layout's columns is
  read with that layout;
- `split`: read only this split (default: every split, in order); `config`: the Hub config name;
- `hub`, `hub_timeout` (seconds, default 10): see above.
Rows are parsed like `chat-messages` lines (`chat_messages.record_from_row`); `record_index` is
the row's position over all splits read; other scalar columns (and the split) go to metadata.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.ingest.formats.base import BaseAdapter, LoadResult
from builder.ingest.formats.chat_messages import (
    ColumnMapping,
    parse_chat_action,
    record_from_row,
    split_marked_observation,
)
from builder.ingest.formats.source import Source
from builder.ingest.hub_inputs import mapping_options
from schemas.steps import Action
from schemas.trajectories import Message

DATA_SUFFIXES = (".parquet", ".arrow")
MARKER_FILES = ("dataset_info.json", "dataset_dict.json", "state.json")
_TRUE = ("1", "true", "yes", "on")


def _is_offline() -> bool:
    return any(
        os.environ.get(v, "").lower() in _TRUE for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def hub_id(source: Source) -> str | None:
    hub = source.options.get("hub")
    if isinstance(hub, str) and hub:
        return hub
    return str(source.path) if hub else None


def _is_dataset_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    if any((path / marker).is_file() for marker in MARKER_FILES):
        return True
    for pattern in ("*", "*/*"):
        if any(p.suffix in DATA_SUFFIXES for p in path.glob(pattern)):
            return True
    return False


def _check_hub(repo_id: str, timeout: float) -> None:
    """Fail fast (no hang, no download) when the Hub cannot serve `repo_id`."""
    if _is_offline():
        raise InputError(
            f"{repo_id}: Hugging Face Hub dataset requested but offline mode is on "
            "(HF_HUB_OFFLINE / HF_DATASETS_OFFLINE); download it and pass the local folder",
            kind="hub_unreachable",
        )
    from huggingface_hub import HfApi

    try:
        HfApi(endpoint=os.environ.get("HF_ENDPOINT")).dataset_info(repo_id, timeout=timeout)
    except Exception as exc:
        raise InputError(
            f"{repo_id}: cannot reach this dataset on the Hugging Face Hub "
            f"({type(exc).__name__}: {exc}); check the id and the network, or pass a local folder",
            kind="hub_unreachable",
        ) from exc


def _splits(data: Any, split: str | None, name: str) -> Iterator[tuple[str | None, Iterable[Any]]]:
    """(split name, rows) for a Dataset/IterableDataset or a dict of them."""
    import datasets

    if not isinstance(data, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        yield split, data
        return
    for wanted in [split] if split else list(data):
        if wanted not in data:
            raise InputError(f"{name}: split {wanted!r} not found; available: {list(data)}")
        yield wanted, data[wanted]


def open_dataset(source: Source) -> Any:
    """The dataset (streaming, or memory-mapped for Arrow files), not yet read."""
    import datasets

    split = source.options.get("split")
    repo_id = hub_id(source)
    if repo_id is not None:
        _check_hub(repo_id, float(source.options.get("hub_timeout", 10)))
        return datasets.load_dataset(
            repo_id, name=source.options.get("config"), split=split, streaming=True
        )
    path = source.path
    if path.is_file() and path.suffix == ".parquet":
        return datasets.load_dataset(
            "parquet", data_files=[str(path)], split="train", streaming=True
        )
    if path.is_file() and path.suffix == ".arrow":
        return datasets.Dataset.from_file(str(path))  # memory-mapped, not loaded
    if not path.is_dir():
        raise InputError(f"{path}: not a Parquet/Arrow file or a dataset folder", kind="not_found")
    if (path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file():
        return datasets.load_from_disk(str(path))  # memory-mapped Arrow files
    return datasets.load_dataset(str(path), split=split, streaming=True)


class HfDatasetAdapter(BaseAdapter):
    name = "hf-dataset"
    harness = "chat-messages"
    text_replies = True

    def detect(self, source: Source) -> bool:
        if hub_id(source) is not None:
            return True
        path = source.path
        if path.is_file():
            return path.suffix in DATA_SUFFIXES
        return _is_dataset_dir(path)

    def load(self, source: Source) -> Iterator[LoadResult]:
        ColumnMapping.from_options(source.options)  # a bad option fails before any download
        mapping: ColumnMapping | None = None
        try:
            data = open_dataset(source)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(
                f"{source.name}: cannot open as a dataset ({type(exc).__name__}: {exc})",
                kind="unreadable",
            ) from exc
        index = 0
        for split, rows in _splits(data, source.options.get("split"), source.name):
            for row in _rows(source, rows):
                if split is not None and isinstance(row, dict):
                    row = {**row, "split": split}
                if mapping is None:  # a known layout is recognised by its columns
                    first = row if isinstance(row, dict) else {}
                    mapping = ColumnMapping.from_options(mapping_options(source.options, first))
                yield record_from_row(
                    row, source=source, index=index, fmt=self.name, mapping=mapping
                )
                index += 1

    def parse_action(self, message: Message) -> list[Action]:
        return parse_chat_action(message)

    def split_observation(self, message: Message) -> tuple[str, str, str]:
        return split_marked_observation(message.content)


def _rows(source: Source, rows: Iterable[Any]) -> Iterator[Any]:
    """Rows one at a time; a read failure mid-stream is an error for the whole source."""
    iterator = iter(rows)
    while True:
        try:
            row = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise InputError(
                f"{source.name}: dataset read failed ({type(exc).__name__}: {exc})",
                kind="unreadable",
            ) from exc
        yield row


ADAPTER = HfDatasetAdapter()
