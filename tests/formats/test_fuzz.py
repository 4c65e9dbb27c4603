"""Property-based fuzzing of every format adapter over mutated and truncated real samples.

Each example takes one real file from ../shared/trajectories, damages it (truncation, byte
flips, deletions and insertions, or a JSON subtree swapped for a hostile value: wrong types,
huge strings, nesting past the parser's limit) and reads it both with its own format forced
and through detection. Properties: nothing escapes (`adapter_error` rows mean an exception
escaped an adapter and was only caught by the ingest guard), every result is a trajectory or
a quarantine row, steps can be built from every trajectory, and input that is no longer valid
JSON is quarantined — for JSONL, each bad line under its own record index.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.formats import detect
from builder.formats.base import Source
from builder.ingest import load_source
from builder.steps import EligibilityRules, build_steps
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.formats.common import SAMPLES, sample_files

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
    st.recursive(json_leaf, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "content", "type", "messages", "tool_calls", "id", "x"]),
        kids, max_size=3), max_leaves=8),  # fmt: skip
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


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["truncate", "flip", "delete", "insert", "subtree"]))
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind == "subtree":
        lines = data.decode().splitlines()
        if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines if line):
            k = draw(st.integers(0, len(lines) - 1))  # JSONL: damage one line
            lines[k] = json.dumps(_swap_subtree(json.loads(lines[k]), draw))
            return ("\n".join(lines) + "\n").encode()
        return json.dumps(_swap_subtree(json.loads(data), draw)).encode()
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        else:
            out[at:at] = draw(st.binary(min_size=1, max_size=16) | st.sampled_from([b"{", b"]", b'"', b"\n"]))  # fmt: skip
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
    fmt, adapter, records = load_source(Source(path), forced)
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
def test_damaged_samples_are_read_or_quarantined_never_raised(sample: Path, data: st.DataObject) -> None:
    original = sample.read_bytes()
    mutated = data.draw(damaged(original))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / sample.name
        path.write_bytes(mutated)
        fmt = FORMATS[sample]
        forced = _read(path, fmt)
        detected = _read(path, None)
        jsonl = Source(sample).is_jsonl
        if not jsonl and not _is_json(mutated) and mutated.strip():
            assert any(isinstance(r, QuarantineRecord) for r in forced)
            assert any(isinstance(r, QuarantineRecord) for r in detected)
        if jsonl:
            quarantined = {r.record_index for r in forced if isinstance(r, QuarantineRecord)}
            whole_file = None in quarantined
            assert whole_file or _bad_lines(mutated) <= quarantined
