"""hf-dataset adapter: Parquet files and dataset folders built in tmp_path; Hub ids offline."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.errors import InputError
from builder.ingest.formats.base import LoadResult
from builder.ingest.formats.hf_dataset import ADAPTER
from builder.ingest.formats.source import Source
from schemas.quarantine import QuarantineRecord
from schemas.trajectories import TrajectoryRecord
from tests.ingest.formats.common import SAMPLES

SWE_SMITH = SAMPLES / "swe-smith-messages" / "ft_xml_example.jsonl"


def trajectories(rows: Iterable[LoadResult]) -> list[TrajectoryRecord]:
    """The rows, all of which must be trajectories (not quarantined)."""
    rows = list(rows)
    assert all(isinstance(r, TrajectoryRecord) for r in rows), rows
    return [r for r in rows if isinstance(r, TrajectoryRecord)]


def quarantined(rows: list[LoadResult]) -> list[QuarantineRecord]:
    return [r for r in rows if isinstance(r, QuarantineRecord)]


def sample_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SWE_SMITH.read_text().splitlines() if line.strip()]


def test_parquet_file_of_real_rows_reads_like_chat_messages(tmp_path: Path) -> None:
    rows = sample_rows()
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    source = Source(path)
    assert ADAPTER.detect(source)
    records = trajectories(ADAPTER.load(source))
    assert all(isinstance(r, TrajectoryRecord) for r in records)
    assert [r.native_id for r in records] == [r["instance_id"] for r in rows]
    assert [r.record_index for r in records] == [0, 1, 2]
    for row, record in zip(rows, records, strict=True):
        assert [(m.role, m.content) for m in record.messages] == [
            (m["role"], m["content"]) for m in row["messages"]
        ]
    # The same hand counts as the JSONL sample (see test_chat_messages.py for how they were made).
    assert [
        sum(m.role == "assistant" and len(ADAPTER.parse_action(m)) == 1 for m in r.messages)
        for r in records
    ] == [37, 44, 22]
    first = records[0]
    assert ADAPTER.split_observation(first.messages[3])[0] == "OBSERVATION:\n"
    assert first.source_format == "hf-dataset"


def test_saved_dataset_with_a_column_mapping(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {
            "id": "r1",
            "conversations": [
                {"from": "system", "value": "sys"},
                {"from": "human", "value": "<pr_description>\nfix x\n</pr_description>"},
                {"from": "gpt", "value": "Look.\n```bash\nls\n```"},
                {"from": "human", "value": "OBSERVATION:\na.py"},
            ],
            "resolved": True,
            "model_name": "m1",
        }
    ]
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    options = {
        "messages": "conversations",
        "id": "id",
        "role_key": "from",
        "content_key": "value",
        "resolved": "resolved",
        "model": "model_name",
    }
    source = Source(folder, options=options)
    assert ADAPTER.detect(source)
    [record] = trajectories(ADAPTER.load(source))
    assert [m.role for m in record.messages] == ["system", "user", "assistant", "user"]
    assert [m.content for m in record.messages] == [m["value"] for m in rows[0]["conversations"]]
    assert (record.native_id, record.resolved, record.agent_model) == ("r1", True, "m1")
    assert record.task == "fix x"
    assert [a.command for a in ADAPTER.parse_action(record.messages[2])] == ["ls"]
    [arrow_file] = folder.glob("*.arrow")  # the Arrow file alone reads the same, memory-mapped
    [again] = trajectories(ADAPTER.load(Source(arrow_file, options=options)))
    assert again.messages == record.messages and again.trajectory_id == record.trajectory_id


def test_dataset_dict_folder_reads_every_split_with_running_indexes(tmp_path: Path) -> None:
    def rows(prefix: str, n: int) -> list[dict[str, Any]]:
        return [
            {"instance_id": f"{prefix}{i}", "messages": [{"role": "user", "content": f"{i}"}]}
            for i in range(n)
        ]

    folder = tmp_path / "dd"
    datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_list(rows("t", 2)),
            "test": datasets.Dataset.from_list(rows("e", 1)),
        }
    ).save_to_disk(str(folder))
    records = trajectories(ADAPTER.load(Source(folder)))
    assert [(r.native_id, r.record_index) for r in records] == [("t0", 0), ("t1", 1), ("e0", 2)]
    assert json.loads(records[2].metadata) == {"split": "test"}
    only_test = trajectories(ADAPTER.load(Source(folder, options={"split": "test"})))
    assert [r.native_id for r in only_test] == ["e0"]
    with pytest.raises(InputError, match="split 'nope' not found"):
        list(ADAPTER.load(Source(folder, options={"split": "nope"})))


def test_folder_of_jsonl_data_files_with_json_text_messages_and_a_bad_row(tmp_path: Path) -> None:
    data = tmp_path / "hub_layout" / "data"
    data.mkdir(parents=True)
    good = {"instance_id": "a", "messages": json.dumps([{"role": "user", "content": "hi"}])}
    bad = {"instance_id": "b", "messages": json.dumps({"role": "user"})}
    (data / "train.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    rows = list(ADAPTER.load(Source(tmp_path / "hub_layout")))
    [record] = trajectories(rows[:1])
    assert [(m.role, m.content) for m in record.messages] == [("user", "hi")]
    [bad_row] = quarantined(rows[1:])
    assert (bad_row.error_kind, bad_row.record_index) == ("wrong_shape", 1)
    assert "record 1" in bad_row.message and "expected a list" in bad_row.message


def test_missing_messages_column_is_quarantined_per_row(tmp_path: Path) -> None:
    path = tmp_path / "other.parquet"
    pq.write_table(pa.Table.from_pylist([{"text": "a"}, {"text": "b"}]), path)
    rows = quarantined(list(ADAPTER.load(Source(path))))
    assert [r.record_index for r in rows] == [0, 1]
    assert "'messages'" in rows[0].message and str(path) in rows[0].message


def test_hub_id_fails_fast_and_names_the_id_when_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    source = Source(Path("SWE-bench/SWE-smith-trajectories"), options={"hub": True})
    assert ADAPTER.detect(source)
    with pytest.raises(InputError, match="SWE-bench/SWE-smith-trajectories") as info:
        list(ADAPTER.load(source))
    assert info.value.kind == "hub_unreachable"


def test_hub_id_fails_fast_when_the_hub_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a free local port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    source = Source(
        Path("local"), options={"hub": "nebius/SWE-agent-trajectories", "hub_timeout": 2}
    )
    started = time.monotonic()
    with pytest.raises(InputError, match="nebius/SWE-agent-trajectories") as info:
        list(ADAPTER.load(source))
    assert info.value.kind == "hub_unreachable"
    assert time.monotonic() - started < 30


def test_detection_claims_datasets_only(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("x")
    assert not ADAPTER.detect(Source(plain))
    files = [p for p in SAMPLES.rglob("*") if p.is_file()]
    assert len(files) >= 12
    assert [p for p in files if ADAPTER.detect(Source(p))] == []
