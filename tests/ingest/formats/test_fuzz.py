"""Property-based fuzzing of every format adapter over mutated and truncated real samples.

Each example takes one real file from ../shared/trajectories, damages it (truncation, byte
flips, deletions and insertions, or a JSON subtree swapped for a hostile value: wrong types,
huge strings, nesting past the parser's limit) and reads it both with its own format forced
and through detection. Properties: nothing escapes (`adapter_error` rows mean an exception
escaped an adapter and was only caught by the ingest guard), every result is a trajectory or
a quarantine row, steps can be built from every trajectory, and input that is no longer valid
JSON is quarantined — for JSONL, each bad line under its own record index — and the ingest
worker writes its Parquet shards for whatever came out (Arrow refuses some valid JSON, such
as lone surrogate escapes, and recursion limits bite there too).
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.ingest.formats import detect
from builder.ingest.formats.source import Source
from builder.ingest.parallel import load_source, process_task
from builder.steps.pairing import EligibilityRules, build_steps
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES, sample_files

FILES = [p for p in sample_files() if p.name != "report.json"]
FORMATS = {p: detect(Source(p)).name for p in FILES}
RULES = EligibilityRules(min_tokens=64)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.just("x" * 200_000),
    st.just("\x00\x01\ufffd"),
    st.just("\ud800"),  # a lone surrogate: valid JSON escape, invalid Unicode
)
hostile = st.one_of(
    json_leaf,
    st.recursive(
        json_leaf,
        lambda kids: (
            st.lists(kids, max_size=3)
            | st.dictionaries(
                st.sampled_from(["role", "content", "type", "messages", "tool_calls", "id", "x"]),
                kids,
                max_size=3,
            )
        ),
        max_leaves=8,
    ),
    st.integers(min_value=201, max_value=900).map(lambda n: _deep(n)),  # past MAX_DEPTH
)


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n):
        value = [value]
    return value


def _swap_subtree(value: Any, draw: st.DrawFn) -> Any:
    """`value` with one node, reached by a random walk from the root, replaced."""
    if not isinstance(value, dict | list) or not value or draw(st.integers(0, 4)) == 0:
        return draw(hostile)
    if isinstance(value, dict):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _swap_subtree(value[key], draw)}
    index = draw(st.integers(0, len(value) - 1))
    return [*value[:index], _swap_subtree(value[index], draw), *value[index + 1 :]]


def _leaves(value: Any) -> list[tuple[Any, ...]]:
    """Paths to every scalar of a JSON value (iteratively: samples can be deep)."""
    found, stack = [], [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
        else:
            found.append(path)
    return sorted(found, key=repr)


HOSTILE_LEAVES: list[Any] = [
    None, True, 2**63, 10**400, -1, 0.5, "", "\ud800", "x" * 200_000, "\x00\x01\x02",
    [], {}, "```bash\nls\n```", "<function=bash><parameter=command>ls</parameter></function>",
]  # fmt: skip


def _scatter(value: Any, draw: st.DrawFn) -> Any:
    """`value` with scalars swapped for hostile leaves: every number half the time (costs,
    token counts: there are few of them), any other scalar one time in twenty."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    root: Any = json.loads(json.dumps(value))
    for path in _leaves(root):
        parent = _at(root, path[:-1])
        leaf = parent[path[-1]]
        number = isinstance(leaf, int | float) and not isinstance(leaf, bool)
        if rng.random() < (0.5 if number else 0.05):
            parent[path[-1]] = rng.choice(HOSTILE_LEAVES)
    return root


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    kinds = ["truncate", "flip", "delete", "insert", "subtree", "scatter", "scatter"]
    kind = draw(st.sampled_from(kinds))
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind in ("subtree", "scatter"):
        swap = _swap_subtree if kind == "subtree" else _scatter
        lines = data.decode().splitlines()
        if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines if line):
            k = draw(st.integers(0, len(lines) - 1))  # JSONL: damage one line
            lines[k] = json.dumps(swap(json.loads(lines[k]), draw))
            return ("\n".join(lines) + "\n").encode()
        return json.dumps(swap(json.loads(data), draw)).encode()
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        else:
            chunk = st.binary(min_size=1, max_size=16) | st.sampled_from([b"{", b"]", b'"', b"\n"])
            out[at:at] = draw(chunk)
    return bytes(out)


def _bad_lines(data: bytes) -> set[int]:
    bad = set()
    for index, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        try:
            json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            bad.add(index)
    return bad


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return True


def _read(path: Path, forced: str | None) -> list[TrajectoryRecord | QuarantineRecord]:
    _, adapter, records = load_source(Source(path), forced)
    results = list(records)
    for record in results:
        assert isinstance(record, TrajectoryRecord | QuarantineRecord), record
        if isinstance(record, QuarantineRecord):
            assert record.error_kind != "adapter_error", record.message
            assert record.message
        else:
            assert adapter is not None
            list(build_steps(record, adapter, RULES))
    return results


@pytest.mark.parametrize("sample", FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_samples_are_read_or_quarantined_never_raised(
    sample: Path, data: st.DataObject
) -> None:
    original = sample.read_bytes()
    mutated = data.draw(damaged(original))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / sample.name
        path.write_bytes(mutated)
        fmt = FORMATS[sample]
        forced = _read(path, fmt)
        detected = _read(path, None)
        # the whole worker, Parquet writing included, on the detected format
        summary = process_task(0, [(Source(path), None)], Path(tmp) / "out", RULES)
        written = sum(len(pq.read_table(f)) for f in (Path(tmp) / "out").rglob("*.parquet"))
        assert written >= summary.total.trajectories + summary.total.quarantined > 0
        jsonl = Source(sample).is_jsonl
        if not jsonl and not _is_json(mutated) and mutated.strip():
            assert any(isinstance(r, QuarantineRecord) for r in forced)
            assert any(isinstance(r, QuarantineRecord) for r in detected)
        if jsonl:
            quarantined = {r.record_index for r in forced if isinstance(r, QuarantineRecord)}
            whole_file = None in quarantined
            assert whole_file or _bad_lines(mutated) <= quarantined


HOSTILE_NUMBERS: list[Any] = [2**63, 10**400, -(2**70), 1e308, 0.5, -1, "7", None, True]


def _every_number(value: Any, replacement: Any) -> Any:
    root: Any = json.loads(json.dumps(value))
    for path in _leaves(root):
        leaf = _at(root, path)
        if isinstance(leaf, int | float) and not isinstance(leaf, bool):
            _at(root, path[:-1])[path[-1]] = replacement
    return root


@pytest.mark.parametrize("number", HOSTILE_NUMBERS, ids=repr)
@pytest.mark.parametrize("sample", FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_number_replaced_by_a_hostile_one(sample: Path, number: Any) -> None:
    """Costs and counts past float or int64 range, or of the wrong type, in every field."""
    lines = sample.read_text().splitlines()
    if Source(sample).is_jsonl:
        text = "\n".join(json.dumps(_every_number(json.loads(x), number)) for x in lines if x)
    else:
        text = json.dumps(_every_number(json.loads(sample.read_text()), number))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / sample.name
        path.write_text(text)
        _read(path, FORMATS[sample])
        summary = process_task(0, [(Source(path), None)], Path(tmp) / "out", RULES)
        assert summary.total.trajectories + summary.total.quarantined > 0
