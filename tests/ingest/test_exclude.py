"""Decontamination at ingest: instance ids of the real files, the shipped evaluation sets, and
`exclude_instances` dropping exactly the trajectories of the listed instances.

The truth is read straight from the raw files with `json` (tests/ingest/raw_ids.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from builder.config import config_hash, load_config
from builder.errors import ConfigError
from builder.ingest.instances import NAMED_SETS, instance_id_of, named_set, read_id_file
from builder.ingest.parallel import InputSpec, run_ingest
from builder.run.ingest_state import ingest_key
from builder.steps.pairing import EligibilityRules
from tests.ingest.raw_ids import raw_instance_ids
from tests.paths import SHARED

SWE_BENCH_ID = re.compile(r"^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+$")


def _ingest(out: Path, exclude: frozenset[str] = frozenset()):
    rules = EligibilityRules(exclude_instances=exclude)
    return run_ingest([InputSpec(str(SHARED))], out, rules=rules, workers=1)


def _kept(out: Path) -> dict[tuple[str, int], str | None]:
    table = pl.read_parquet(out / "trajectories" / "*.parquet")
    kept = {}
    for row in table.iter_rows(named=True):
        key = (Path(row["source_path"]).relative_to(SHARED).as_posix(), row["record_index"])
        kept[key] = instance_id_of(row["source_format"], row["native_id"])
    return kept


def test_the_shipped_sets_have_their_sizes_well_formed_ids_and_the_documented_overlap() -> None:
    verified, lite = named_set("swe-bench-verified"), named_set("swe-bench-lite")
    assert (len(verified), len(lite)) == (500, 300)
    assert all(SWE_BENCH_ID.match(i) for i in verified | lite)
    assert len(verified & lite) == 93  # instance_sets/SOURCES.md: the overlap the source lists
    assert "django__django-16255" in verified and "psf__requests-863" in lite - verified
    with pytest.raises(ConfigError, match="known sets: swe-bench-verified"):
        named_set("swe-bench-full")


def test_every_trajectory_of_the_real_files_gets_the_instance_id_its_raw_file_records(
    tmp_path: Path,
) -> None:
    raw = raw_instance_ids()
    _ingest(tmp_path / "out")
    assert _kept(tmp_path / "out") == raw
    assert sum(v is not None for v in raw.values()) == 9  # 2 mini, 2 SWE-agent, 3 rows, 2 issues
    assert raw[("swe-smith-messages/ft_xml_example.jsonl", 1)] == "getmoto__moto.694ce1f4.pr_7331"


def test_excluding_swe_bench_verified_drops_exactly_the_trajectories_of_its_instances(
    tmp_path: Path,
) -> None:
    raw = raw_instance_ids()
    verified = named_set("swe-bench-verified")
    expected = {k for k, v in raw.items() if v in verified}
    assert expected  # the real files hold a Verified instance (django__django-16255)
    out = tmp_path / "out"
    summary = _ingest(out, verified)
    kept = _kept(out)
    assert set(kept) == set(raw) - expected
    assert summary.total.excluded == len(expected)
    assert summary.excluded_instances == {raw[k]: 1 for k in expected}
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    assert set(steps["trajectory_id"]) == set(trajectories["trajectory_id"])  # no orphan steps
    written = json.loads((out / "ingest_summary.json").read_text())
    assert written["total"]["excluded"] == len(expected)
    assert written["watched_instances"] == {}  # nothing of Verified left; Lite's one was too


def test_a_list_of_ids_drops_them_in_every_format_that_records_one(tmp_path: Path) -> None:
    raw = raw_instance_ids()
    chosen = {
        "pydicom__pydicom-1458",  # SWE-agent 0.x: the .traj file's name
        "marshmallow-code__marshmallow-1867",  # SWE-agent 1.x: replay_config
        "getmoto__moto.694ce1f4.pr_7331",  # one line of a SWE-smith JSONL
        "neubig/pr-viewer#5",  # an OpenHands resolver issue
        "github_issue",  # mini-swe-agent bare list: its file name
        "not-in-any-file",
    }
    out = tmp_path / "out"
    summary = _ingest(out, frozenset(chosen))
    dropped = {k for k, v in raw.items() if v in chosen}
    assert len(dropped) == 5
    assert set(_kept(out)) == set(raw) - dropped
    assert summary.total.excluded == 5
    by_format = {name: c.excluded for name, c in summary.by_format.items() if c.excluded}
    assert by_format == {"swe-agent": 2, "chat-messages": 1, "openhands-v0": 1, "mini-swe-agent": 1}


def test_a_kept_trajectory_of_a_watched_set_is_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    summary = _ingest(tmp_path / "out")
    assert summary.watched == {
        "swe-bench-verified": {"django__django-16255"},
        "swe-bench-lite": {"django__django-16255"},
    }
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("SWE-bench Verified instance(s) (django__django-16255)" in m for m in warned)


def _config(tmp_path: Path, exclude: object | None) -> Path:
    config = {"inputs": [str(SHARED)], "output": {"dir": str(tmp_path / "run")}}
    if exclude is not None:
        config["exclude_instances"] = exclude
    path = tmp_path / "cfg" / "pipeline.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(config))
    return path


def test_the_config_takes_a_set_a_file_or_a_list(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "ids.txt").write_text(
        "# held out\ndjango__django-10999\n\nastropy__astropy-7166\n"
    )
    by_set = load_config(_config(tmp_path, "swe-bench-lite")).exclude_instances
    assert by_set.sets == ["swe-bench-lite"] and by_set.resolved() == named_set("swe-bench-lite")
    by_file = load_config(_config(tmp_path, "ids.txt")).exclude_instances  # beside the config
    assert by_file.files == [str(tmp_path / "cfg" / "ids.txt")]
    assert by_file.resolved() == {"django__django-10999", "astropy__astropy-7166"}
    mixed = load_config(_config(tmp_path, ["swe-bench-verified", "x__y-1"])).exclude_instances
    assert mixed.sets == ["swe-bench-verified"] and mixed.ids == ["x__y-1"]
    assert len(mixed.resolved()) == 501
    with pytest.raises(ConfigError, match="neither a named set"):
        load_config(_config(tmp_path, "swe-bench-full"))
    with pytest.raises(ConfigError, match="swe-bench-lite"):
        load_config(_config(tmp_path, {"sets": ["verified"]}))


def test_id_files_may_be_json_lists_or_jsonl_rows_and_bad_ones_name_the_line(
    tmp_path: Path,
) -> None:
    listed = tmp_path / "ids.json"
    listed.write_text(json.dumps(["a__b-1", "c__d-2"]))
    assert read_id_file(listed) == ["a__b-1", "c__d-2"]
    rows = tmp_path / "ids.jsonl"
    rows.write_text('{"instance_id": "a__b-1", "repo": "a/b"}\n{"instance_id": "c__d-2"}\n')
    assert read_id_file(rows) == ["a__b-1", "c__d-2"]
    rows.write_text('{"instance_id": "a__b-1"}\n{"repo": "x"}\n')
    with pytest.raises(ConfigError, match=r"ids.jsonl line 2: no `instance_id`"):
        read_id_file(rows)
    spaced = tmp_path / "ids.txt"
    spaced.write_text("a__b-1\nc d\n")
    with pytest.raises(ConfigError, match=r"ids\.txt line 2"):
        read_id_file(spaced)


def test_the_exclusion_reingests_when_its_ids_change_and_leaves_other_hashes_alone(
    tmp_path: Path,
) -> None:
    (tmp_path / "cfg").mkdir()
    ids = tmp_path / "cfg" / "ids.txt"
    ids.write_text("a__b-1\n")
    plain = load_config(_config(tmp_path, None))
    assert "exclude_instances" not in ingest_key(plain)  # runs made before the key: unchanged
    unset_hash = config_hash(plain)
    assert config_hash(load_config(_config(tmp_path, {"ids": []}))) == unset_hash
    with_file = load_config(_config(tmp_path, "ids.txt"))
    assert config_hash(with_file) != unset_hash
    before = ingest_key(with_file)
    ids.write_text("a__b-1\nc__d-2\n")  # same config text, other ids: the ingest is redone
    assert ingest_key(load_config(_config(tmp_path, "ids.txt"))) != before
    assert set(NAMED_SETS) == {"swe-bench-verified", "swe-bench-lite"}
