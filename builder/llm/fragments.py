"""JSON text of messages, encoded once per message object.

Every request of a step carries the same context (the trajectory's own `Message` objects up to
the observation), and consecutive steps share most of it: encoding it again for each cache key
and each request body was a large share of the client's CPU at 64 requests in flight
(benchmarks/bench_run.py). A memo keyed by object identity keeps the message itself alive next
to its text, so an id is never reused for another object while its entry exists.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from schemas.trajectories import Message

MEMO_SIZE = 16384  # messages; about the contexts of a few hundred steps in flight


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON, non-ASCII kept: the one encoding of cache keys and request bodies.
    (Encoders made once: `json.dumps` with options builds a new one per call.)"""
    return (_SORTED if sort_keys else _COMPACT).encode(value)


class FragmentMemo:
    """`text(message)` is `encode(message)`, computed once per (object, variant)."""

    def __init__(self, encode: Callable[[Message, bool], str], size: int = MEMO_SIZE) -> None:
        self._encode = encode
        self._size = size
        self._entries: OrderedDict[tuple[int, bool], tuple[Message, str]] = OrderedDict()
        self._lock = threading.Lock()

    def text(self, message: Message, variant: bool = False) -> str:
        key = (id(message), variant)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is message:
                self._entries.move_to_end(key)
                return entry[1]
        text = self._encode(message, variant)
        with self._lock:
            self._entries[key] = (message, text)
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return text

    def array(self, messages: Sequence[Message], variant: bool = False) -> str:
        """The JSON array of the messages' texts."""
        return "[" + ",".join(self.text(m, variant) for m in messages) + "]"


def splice(fields: dict[str, Any], name: str, raw_json: str, *, sort_keys: bool) -> str:
    """`dumps(fields | {name: value})` where `raw_json` is the value's JSON text already.

    With `sort_keys`, the text equals the sorted dump of the whole object; without, `name`
    goes where it is in `fields` (its value there is a placeholder and is ignored)."""
    keys = sorted(fields) if sort_keys else list(fields)
    if name in fields:
        at = keys.index(name)
        before, after = keys[:at], keys[at + 1 :]
    else:
        at = next((i for i, k in enumerate(keys) if k > name), len(keys))
        before, after = keys[:at], keys[at:]
    pieces = [dumps({k: fields[k] for k in part}, sort_keys=sort_keys) for part in (before, after)]
    head, tail = pieces[0][1:-1], pieces[1][1:-1]
    middle = f"{dumps(name)}:{raw_json}"
    return "{" + ",".join(p for p in (head, middle, tail) if p) + "}"
