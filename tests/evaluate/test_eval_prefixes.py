"""`nap-builder eval --prefixes both`: each compressor judged on raw prefixes and on its own
compressed prefixes, side by side, over the scripted endpoint (its agent gets lost on a plain
summary unless its context already holds a compressed observation)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.evaluate.eval_fixtures import cli, eval_args, read_report, write_config
from tests.run.nap_server import COMPRESSED, nap_server

SPECS = ["rule:head_tail", "omit"]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], str]:
    tmp = tmp_path_factory.mktemp("prefixes")
    with nap_server() as server:
        config = write_config(tmp, server.base_url)
        done = cli(*eval_args(config, SPECS, "--prefixes", "both"))
        requests = list(server.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "out", requests, done.stdout


def _rows(out: Path, folder: str, mode: str) -> pl.DataFrame:
    frame = pl.read_parquet(out / "eval" / folder / "steps.parquet")
    return frame.filter(pl.col("prefix_mode") == mode).sort("trajectory_id", "step_index")


def test_every_step_is_judged_on_raw_and_on_its_own_prefixes(
    evaluated: tuple[Path, list[dict], str],
) -> None:
    out, _, _ = evaluated
    raw, own = _rows(out, "rule-head_tail", "raw"), _rows(out, "rule-head_tail", "own")
    assert raw.height == own.height > 0
    assert raw["rendered"].to_list() == own["rendered"].to_list()  # the same outputs judged
    # an own-prefix row replaces exactly the earlier steps the rule changed (from the raw rows)
    changed = raw.with_columns(
        (pl.col("valid") & (pl.col("compressed_tokens") < pl.col("raw_tokens"))).alias("c")
    )
    expected = [
        int(changed.filter((pl.col("trajectory_id") == t) & (pl.col("step_index") < s))["c"].sum())
        for t, s in zip(own["trajectory_id"], own["step_index"], strict=True)
    ]
    assert own["prefix_replaced"].to_list() == expected and sum(expected) > 0
    assert (own["prefix_shown_tokens"] <= own["prefix_raw_tokens"]).all()
    assert raw["prefix_replaced"].sum() == raw["prefix_raw_tokens"].sum() == 0


def test_own_prefixes_change_what_the_agent_does_and_the_report_shows_both(
    evaluated: tuple[Path, list[dict], str],
) -> None:
    out, requests, stdout = evaluated
    raw, own = _rows(out, "omit", "raw"), _rows(out, "omit", "own")
    assert raw["preserved"].sum() == 0  # a summary alone loses the scripted agent
    # with its own summaries earlier in the context it follows them: every step that has one
    assert own["preserved"].to_list() == (own["prefix_replaced"] > 0).to_list()
    report = read_report(out, "omit")
    assert report["preservation_rate"] == 0.0
    assert report["own_prefixes"]["preserved"] == int(own["preserved"].sum()) > 0
    seen = own["raw_tokens"] + own["prefix_raw_tokens"]
    shown = own["compressed_tokens"] + own["prefix_shown_tokens"]
    saved = (seen.sum() - shown.sum()) / seen.sum()
    assert report["own_prefixes"]["context_tokens_saved_fraction"] == pytest.approx(saved)
    assert saved > 0
    md = (out / "eval" / "report.md").read_text()
    table = md[md.index("## on raw prefixes and on its own compressed prefixes") :]
    assert "| `omit` | 0.0% |" in table and "| `rule:head_tail` |" in table
    assert "omit on its own compressed prefixes:" in stdout
    # the own-prefix agent requests carry the placeholder where earlier observations were
    agent = [r for r in requests if not r.get("response_format")]
    earlier = [
        m for r in agent for m in r["messages"][:-1] if COMPRESSED in json.dumps(m["content"])
    ]
    assert earlier
