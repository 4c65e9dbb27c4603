"""ADP in and out: every sample trajectory (the shared real ones, ours, the bundled ones) is
exported, checked against ADP's own validation rules, and read back to the same steps table;
a foreign ADP trajectory (ADP's SWE-smith shape) ingests as format `adp`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from builder.export.adp_export import export_adp
from builder.ingest.formats import detect
from builder.ingest.formats.adp import ADAPTER
from builder.ingest.formats.source import Source
from builder.ingest.parallel import InputSpec, run_ingest
from builder.steps.pairing import EligibilityRules
from tests.ingest.formats.common import DATA, SAMPLES, loaded, steps_of
from tests.paths import SAMPLES as BUNDLED

CLASSES = {"api_action", "code_action", "message_action", "text_observation"}


def adp_problems(trajectory: dict[str, Any]) -> list[str]:
    """ADP's validation of a standardized trajectory (schema/trajectory.py of
    neulab/agent-data-protocol: item classes, tool-call links, code languages), in our words."""
    problems = []
    actions: dict[str, int] = {}
    answered: set[str] = set()
    content = trajectory["content"]
    for index, item in enumerate(content):
        kind = item.get("class_")
        if kind not in CLASSES:
            problems.append(f"{index}: class_ {kind!r}")
        call_id = item.get("tool_call_id")
        following = content[index + 1] if index + 1 < len(content) else {}
        if kind in ("api_action", "code_action"):
            if call_id is None and following.get("class_") == "text_observation":
                problems.append(f"{index}: action followed by an observation has no tool_call_id")
            if call_id is not None:
                if call_id in actions:
                    problems.append(f"{index}: duplicate action id {call_id}")
                actions[call_id] = index
        elif kind == "message_action" and call_id is not None:
            problems.append(f"{index}: message_action with a tool_call_id")
        elif kind == "text_observation" and call_id is not None:
            if call_id not in actions or call_id in answered:
                problems.append(f"{index}: observation {call_id} matches no earlier action")
            answered.add(call_id)
            if item["source"] not in ("user", "agent", "environment"):
                problems.append(f"{index}: source {item['source']!r}")
    problems += [f"action {i} never answered" for i in set(actions) - answered]
    used = {i["language"] for i in content if i.get("class_") == "code_action"}
    if set(trajectory.get("available_code_languages") or []) != used:
        problems.append("available_code_languages differs from the languages used")
    return problems


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("adp")
    inputs = [InputSpec(str(p)) for p in (SAMPLES, DATA, BUNDLED)]
    run_ingest(inputs, root / "a", rules=EligibilityRules(), workers=1)
    export_adp(root / "a", root / "adp", scrub=False)
    run_ingest([InputSpec(str(root / "adp"))], root / "b", rules=EligibilityRules(), workers=1)
    return root / "a", root / "b"


def _table(folder: Path, name: str, keys: list[str]) -> pl.DataFrame:
    return pl.read_parquet(folder / name / "*.parquet").sort(keys)


def test_an_export_reads_back_to_the_same_steps_and_trajectories(
    exported: tuple[Path, Path],
) -> None:
    before, after = exported
    steps = _table(before, "steps", ["trajectory_id", "step_index"])
    assert steps.height > 200 and steps["source_format"].n_unique() >= 11
    assert steps.equals(_table(after, "steps", ["trajectory_id", "step_index"]))
    drop = ["source_path", "record_index"]
    assert (
        _table(before, "trajectories", ["trajectory_id"])
        .drop(drop)
        .equals(_table(after, "trajectories", ["trajectory_id"]).drop(drop))
    )


def test_every_exported_trajectory_passes_adps_validation(exported: tuple[Path, Path]) -> None:
    before, _ = exported
    lines = (before.parent / "adp" / "full_std.jsonl").read_text().splitlines()
    assert len(lines) == pl.read_parquet(before / "trajectories" / "*.parquet").height
    for line in lines:
        trajectory = json.loads(line)
        assert adp_problems(trajectory) == [], trajectory["id"]
        assert trajectory["schema_version"] == "1.5.0"
        links = trajectory["details"]["nap_builder"]["steps"]
        for link in links:  # each step points at its observation in `content`
            item = trajectory["content"][link["content_index"]]
            assert item["class_"] == "text_observation"
            assert item.get("tool_call_id") == link["tool_call_id"]


FOREIGN = {
    "schema_version": "1.5.0",
    "id": "arrow-py__arrow-1",
    "content": [
        {
            "class_": "text_observation",
            "content": "Fix the f-string formatting.",
            "name": None,
            "source": "user",
        },
        {
            "tool_call_id": "call_000001",
            "class_": "code_action",
            "language": "bash",
            "content": "grep -n __format__ arrow/arrow.py",
            "description": "Find the method.",
        },
        {
            "tool_call_id": "call_000001",
            "class_": "text_observation",
            "content": "791:    def __format__",
            "name": None,
            "source": "environment",
        },
        {
            "tool_call_id": "call_000002",
            "class_": "api_action",
            "function": "str_replace_editor",
            "kwargs": {"command": "view", "path": "/testbed/arrow/arrow.py"},
            "description": "Read it.",
        },
        {
            "tool_call_id": "call_000002",
            "class_": "text_observation",
            "content": "\n".join(f"{i} line" for i in range(400)),
            "name": None,
            "source": "environment",
        },
        {"class_": "message_action", "content": "<finish> done </finish>", "description": ""},
    ],
    "available_code_languages": ["bash"],
    "details": {},
}


def test_a_foreign_adp_trajectory_ingests_as_format_adp(tmp_path: Path) -> None:
    path = tmp_path / "sample_std.json"
    path.write_text(json.dumps([FOREIGN]))
    assert adp_problems(FOREIGN) == []
    assert detect(Source(path)).name == "adp"
    (record,) = loaded(ADAPTER, path)
    assert record.source_format == "adp" and record.native_id == "arrow-py__arrow-1"
    assert [m.role for m in record.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    steps = steps_of(ADAPTER, record, min_tokens=0)
    assert [s.action.tool for s in steps] == ["bash", "str_replace_editor"]
    assert steps[0].action.command == "grep -n __format__ arrow/arrow.py"
    assert steps[0].thought == "Find the method." and steps[0].eligible
    assert steps[1].ineligible_reason == "last_step"  # the finish message is no action


def test_export_names_a_folder_without_trajectories(tmp_path: Path) -> None:
    from builder.errors import ConfigError

    with pytest.raises(ConfigError, match="no trajectories table"):
        export_adp(tmp_path, tmp_path / "adp")
