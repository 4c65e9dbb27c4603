"""`nap-builder eval` end to end: the real CLI over the scripted endpoint on the project samples.

The scripted agent repeats its previous command unless it sees a plain summary, so the raw
observation always preserves the next action and the `omit` placeholder (a summary) never does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.evaluate.eval_fixtures import SPECS, cli, eval_args, read_report, write_config
from tests.llm.servers import FakeAPIServer
from tests.report.svg.svg_read import parse, points, texts, ticks
from tests.run.nap_server import nap_server


@pytest.fixture(scope="module")
def server() -> FakeAPIServer:
    with nap_server() as srv:
        yield srv


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, server: FakeAPIServer) -> Path:
    tmp = tmp_path_factory.mktemp("eval")
    config = write_config(tmp, server.base_url)
    done = cli(*eval_args(config))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Unclosed client session" not in done.stderr  # connections closed on their loop
    return tmp / "out"


def _eligible_steps(out: Path) -> int:
    steps = pl.read_parquet(out / "steps" / "*.parquet")
    return steps.filter(pl.col("eligible")).height


def test_unchanged_preserves_everything_and_saves_nothing(evaluated: Path) -> None:
    report = read_report(evaluated, "unchanged")
    assert report["steps"] == _eligible_steps(evaluated) > 0
    assert report["preserved"] == report["steps"]
    assert report["preservation_rate"] == 1.0
    assert report["raw_tokens"] == report["compressed_tokens"] > 0
    assert report["tokens_saved_fraction"] == 0.0


def test_omit_preserves_less_than_unchanged_and_saves_most(evaluated: Path) -> None:
    unchanged, omit = read_report(evaluated, "unchanged"), read_report(evaluated, "omit")
    assert omit["steps"] == unchanged["steps"]
    assert omit["preservation_rate"] < unchanged["preservation_rate"]
    saved = [read_report(evaluated, s.replace(":", "-"))["tokens_saved_fraction"] for s in SPECS]
    assert omit["tokens_saved_fraction"] == max(saved) > 0.9


def _recomputed(frame: pl.DataFrame) -> dict[str, Any]:
    done = frame.filter(pl.col("evaluated"))
    raw, compressed = done["raw_tokens"].sum(), done["compressed_tokens"].sum()
    return {
        "steps": done.height,
        "preserved": done.filter(pl.col("preserved")).height,
        "preservation_rate": done["preserved"].mean() if done.height else None,
        "raw_tokens": raw,
        "compressed_tokens": compressed,
        "tokens_saved_fraction": 1 - compressed / raw if raw else None,
        "valid_outputs": done.filter(pl.col("valid")).height,
        "fell_back_to_raw": done.filter(pl.col("fell_back_to_raw")).height,
        "agent_format_errors": done.filter(pl.col("format_error")).height,
    }


def _same(report: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if isinstance(value, float):
            assert report[key] == pytest.approx(value, abs=1e-12), key
        else:
            assert report[key] == value, key


@pytest.mark.parametrize("spec", SPECS)
def test_every_report_figure_equals_the_one_recomputed_from_steps_parquet(
    evaluated: Path, spec: str
) -> None:
    folder = evaluated / "eval" / spec.replace(":", "-")
    frame = pl.read_parquet(folder / "steps.parquet")
    report = read_report(evaluated, spec.replace(":", "-"))
    assert set(frame["compressor"]) == {spec} and report["compressor"] == spec
    assert frame.select("trajectory_id", "step_index").is_unique().all()
    _same(report, _recomputed(frame))
    intents = sorted(set(frame["intent"]))
    assert sorted(report["by_intent"]) == intents
    for intent in intents:
        _same(report["by_intent"][intent], _recomputed(frame.filter(pl.col("intent") == intent)))
    assert sum(b["steps"] for b in report["by_intent"].values()) == report["steps"]


def test_rows_match_what_the_agent_saw(evaluated: Path) -> None:
    steps = pl.read_parquet(evaluated / "steps" / "*.parquet").filter(pl.col("eligible"))
    raw = {(r["trajectory_id"], r["step_index"]): r["observation"] for r in steps.to_dicts()}
    unchanged = pl.read_parquet(evaluated / "eval" / "unchanged" / "steps.parquet")
    for row in unchanged.to_dicts():
        assert row["rendered"] == raw[(row["trajectory_id"], row["step_index"])]
        assert row["kind"] == "unchanged" and row["valid"] and not row["fell_back_to_raw"]
    omit = pl.read_parquet(evaluated / "eval" / "omit" / "steps.parquet")
    assert set(omit["rendered"].str.split("\n").list.last()) == {"(output omitted)"}
    assert not omit["preserved"].any()  # the scripted agent gets lost on every summary
    head_tail = pl.read_parquet(evaluated / "eval" / "rule-head_tail" / "steps.parquet")
    applies = head_tail.filter(~pl.col("fell_back_to_raw"))
    assert applies.height > 0 and set(applies["kind"]) == {"code"}
    assert (applies["compressed_tokens"] < applies["raw_tokens"]).all()
    # an output that is not valid (a rule that does not apply) leaves the raw observation
    frames = [pl.read_parquet(p) for p in evaluated.glob("eval/*/steps.parquet")]
    fell_back = pl.concat(frames).filter(pl.col("fell_back_to_raw"))
    assert fell_back.height > 0 and not fell_back["valid"].any()
    for row in fell_back.to_dicts():
        assert row["rendered"] == raw[(row["trajectory_id"], row["step_index"])]
        assert row["compressed_tokens"] == row["raw_tokens"]


def test_report_md_and_plot_cover_every_compressor(evaluated: Path) -> None:
    md = (evaluated / "eval" / "report.md").read_text()
    for spec in SPECS:
        report = read_report(evaluated, spec.replace(":", "-"))
        rate = f"{report['preservation_rate']:.1%}"
        assert any(line.startswith(f"| `{spec}` | {report['steps']} |") and rate in line
                   for line in md.splitlines()), spec  # fmt: skip
    assert re.search(r"^Requests sent: \d+, answered from the cache: \d+", md, re.M)
    plot = parse(evaluated / "eval" / "preservation_vs_tokens_saved.svg")
    reports = [read_report(evaluated, spec.replace(":", "-")) for spec in SPECS]
    drawn = [r for r in reports if r["tokens_saved_fraction"] is not None]
    assert len(drawn) >= 4
    assert texts(plot, "point-label") == [r["compressor"] for r in drawn]
    x0, x1 = (x for x, label in ticks(plot, "x") if label in ("0.0", "1.0"))
    y0, y1 = (y for y, label in ticks(plot, "y") if label in ("0.0", "1.0"))
    for report, (x, y) in zip(drawn, points(plot), strict=True):  # each point at its figures
        assert x == pytest.approx(x0 + report["tokens_saved_fraction"] * (x1 - x0), abs=0.02)
        assert y == pytest.approx(y0 + report["preservation_rate"] * (y1 - y0), abs=0.02)


def test_a_rerun_is_answered_by_the_cache(
    tmp_path: Path, server: FakeAPIServer, evaluated: Path
) -> None:
    config = write_config(
        tmp_path, server.base_url, "again", cache={"dir": str(evaluated / "cache")}
    )
    before = server.count
    done = cli(*eval_args(config))
    assert done.returncode == 0, done.stderr
    assert server.count == before
    for spec in SPECS:
        folder = spec.replace(":", "-")
        first = pl.read_parquet(evaluated / "eval" / folder / "steps.parquet")
        second = pl.read_parquet(tmp_path / "again" / "eval" / folder / "steps.parquet")
        assert first.equals(second)


def test_endpoint_compressor_gets_the_compressor_prompt(tmp_path: Path) -> None:
    with nap_server() as agent, nap_server() as trained:
        block = {"provider": "openai", "model": "trained-compressor", "base_url": trained.base_url}
        config = write_config(tmp_path, agent.base_url, compressor=block)
        done = cli(*eval_args(config, ["endpoint"]))
        assert done.returncode == 0, done.stderr
        rows = pl.read_parquet(tmp_path / "out" / "eval" / "endpoint" / "steps.parquet")
        assert trained.count == rows.height > 0
        bodies = trained.requests
    assert {b["model"] for b in bodies} == {"trained-compressor"}
    assert all("<output lines=" in b["messages"][-1]["content"] for b in bodies)
    assert all(b.get("response_format") and b.get("n", 1) == 1 for b in bodies)
    # the scripted server answers sample 0 with a plain summary: parsed like the teacher's
    assert set(rows["kind"]) == {"plain"} and rows["valid"].all()
    assert read_report(tmp_path / "out", "endpoint")["preserved"] == 0


def test_split_of_a_published_dataset_evaluates_only_its_trajectories(
    tmp_path: Path, server: FakeAPIServer
) -> None:
    from tests.run.nap_server import replicate_samples

    corpus = replicate_samples(tmp_path / "corpus", 3)
    splits = {"publish": {"splits": {"train": 0.5, "test": 0.5}}}
    config = write_config(tmp_path, server.base_url, corpus=corpus, **splits)
    assert cli("run", str(config)).returncode == 0
    dataset = tmp_path / "dataset"
    published = cli("publish", str(tmp_path / "out"), "--to", str(dataset))
    assert published.returncode == 0, published.stderr
    test_ids = {
        tid
        for path in dataset.glob("data/*/test-*.parquet")
        for tid in pl.read_parquet(path, columns=["trajectory_id"])["trajectory_id"]
    }
    all_ids = set(pl.read_parquet(tmp_path / "out" / "trajectories" / "*.parquet")["trajectory_id"])
    assert test_ids and test_ids < all_ids
    done = cli(*eval_args(config, ["unchanged"], "--split", "test", "--dataset", str(dataset)))
    assert done.returncode == 0, done.stderr
    rows = pl.read_parquet(tmp_path / "out" / "eval" / "unchanged" / "steps.parquet")
    assert set(rows["trajectory_id"]) == test_ids
    steps = pl.read_parquet(tmp_path / "out" / "steps" / "*.parquet")
    held_out = steps.filter(pl.col("eligible") & pl.col("trajectory_id").is_in(list(test_ids)))
    assert rows.height == held_out.height
    assert read_report(tmp_path / "out", "unchanged")["split"] == "test"


def test_bad_specs_and_missing_split_fail_clearly(tmp_path: Path, server: FakeAPIServer) -> None:
    config = write_config(tmp_path, server.base_url)
    unknown = cli(*eval_args(config, ["rule:nope"]))
    assert unknown.returncode == 2 and "unknown rule 'nope'" in unknown.stderr
    no_block = cli(*eval_args(config, ["endpoint"]))
    assert no_block.returncode == 2 and "compressor:" in no_block.stderr
    empty = tmp_path / "empty-dataset"
    empty.mkdir()
    split = cli(*eval_args(config, ["unchanged"], "--split", "test", "--dataset", str(empty)))
    assert split.returncode == 2 and "no Parquet file of split 'test'" in split.stderr


def test_eval_never_reingests_a_folder_ingested_from_other_inputs(
    tmp_path: Path, server: FakeAPIServer, evaluated: Path
) -> None:
    steps_before = pl.read_parquet(evaluated / "steps" / "*.parquet")
    other = {"output": {"dir": str(evaluated)}, "eligibility": {"min_tokens": 100}}
    config = write_config(tmp_path, server.base_url, **other)
    done = cli(*eval_args(config, ["unchanged"]))
    assert done.returncode == 2 and "ingested from other inputs" in done.stderr
    assert pl.read_parquet(evaluated / "steps" / "*.parquet").equals(steps_before)


def test_teacher_eval_after_a_run_costs_no_request(tmp_path: Path, server: FakeAPIServer) -> None:
    """Same teacher request, same judgement request as the run's: the cache answers both."""
    config = write_config(tmp_path, server.base_url)
    assert cli("run", str(config)).returncode == 0
    before = server.count
    done = cli(*eval_args(config, ["teacher"]))
    assert done.returncode == 0, done.stderr
    assert server.count == before
    rows = pl.read_parquet(tmp_path / "out" / "eval" / "teacher" / "steps.parquet")
    judged = pl.read_parquet(tmp_path / "out" / "judgements" / "*.parquet")
    cands = pl.read_parquet(tmp_path / "out" / "candidates" / "*.parquet")
    first = (
        cands.filter(pl.col("valid") & (pl.col("source") == "teacher"))
        .group_by("trajectory_id", "step_index")
        .agg(pl.col("candidate_index").min())
        .join(judged, on=["trajectory_id", "step_index", "candidate_index"])
    )
    merged = rows.join(first, on=["trajectory_id", "step_index"])
    assert merged.height == rows.height > 0
    assert (merged["preserved"] == merged["passed"]).all()
