"""The view of a real run (scripted endpoint, project samples) opened in headless Chromium.

The DOM of one step is checked against the run's tables read straight from Parquet, and a
screenshot is saved (also to $NAP_VIEW_SCREENSHOT when set).
"""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import polars as pl
import pytest

from tests.evaluate.eval_fixtures import cli, eval_args, write_config
from tests.run.nap_server import nap_server
from tests.view.chromium import chromium_or_skip, dump_dom, screenshot


class Dom(HTMLParser):
    """Elements with their attributes and text, nested inside #step-detail."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict] = []
        self.elements: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        node = {"tag": tag, "attrs": dict(attrs), "text": "", "parents": list(self.stack)}
        self.elements.append(node)
        if tag not in ("br", "meta", "input", "link"):
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for node in self.stack:
            node["text"] += data

    def having(self, cls: str, inside: dict | None = None) -> list[dict]:
        found = [e for e in self.elements if cls in e["attrs"].get("class", "").split()]
        return [e for e in found if inside is None or any(p is inside for p in e["parents"])]

    def by_id(self, ident: str) -> dict:
        return next(e for e in self.elements if e["attrs"].get("id") == ident)


@pytest.fixture(scope="module")
def run_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("viewrun")
    with nap_server() as server:
        config = write_config(tmp, server.base_url)
        for args in (["run", str(config)], eval_args(config, ["unchanged", "omit"])):
            done = cli(*args)
            assert done.returncode == 0, done.stderr
    done = cli("view", str(tmp / "out"))
    assert done.returncode == 0, done.stderr
    return tmp / "out"


def _step_with_code_selection(out: Path) -> dict:
    """A step whose shortest selected row is a `code` candidate, with its tables' rows."""
    sup = pl.read_parquet(out / "supervision" / "*.parquet")
    cands = pl.read_parquet(out / "candidates" / "*.parquet")
    best = sup.filter((pl.col("rank") == 0) & ~pl.col("is_fallback")).join(
        cands.select("trajectory_id", "step_index", "candidate_index", "kind"),
        on=["trajectory_id", "step_index", "candidate_index"],
    )
    row = (
        best.filter(pl.col("kind") == "code").sort("trajectory_id", "step_index").row(0, named=True)
    )
    key = (pl.col("trajectory_id") == row["trajectory_id"]) & (
        pl.col("step_index") == row["step_index"]
    )
    steps = pl.read_parquet(out / "steps" / "*.parquet").filter(key)
    return {
        "id": f"{row['trajectory_id']}/{row['step_index']}",
        "selected": row,
        "observation": steps["observation"][0],
        "candidates": cands.filter(key).sort("candidate_index").to_dicts(),
        "judgements": pl.read_parquet(out / "judgements" / "*.parquet").filter(key).to_dicts(),
        "references": pl.read_parquet(out / "references" / "*.parquet").filter(key).to_dicts(),
        "supervision": sup.filter(key).sort("rank").to_dicts(),
    }


def test_view_of_a_real_run_in_headless_chromium(run_out: Path, tmp_path: Path) -> None:
    browser = chromium_or_skip()
    step = _step_with_code_selection(run_out)
    url = (run_out / "view.html").resolve().as_uri() + "#step=" + quote(step["id"], safe="")
    dom = Dom()
    dom.feed(dump_dom(browser, url))
    detail = dom.by_id("step-detail")
    assert detail["attrs"]["data-step"] == step["id"]

    # the raw observation, line-numbered, with the selected candidate's omitted lines marked
    raw = dom.by_id("raw")
    lines = dom.having("ln", raw)
    observation = step["observation"].split("\n")
    assert [e["attrs"]["data-line"] for e in lines] == [str(i + 1) for i in range(len(observation))]
    assert [e["text"] for e in lines] == [f"{i + 1}{t}" for i, t in enumerate(observation)]
    chosen = next(
        c for c in step["candidates"] if c["candidate_index"] == step["selected"]["candidate_index"]
    )
    omitted = {int(e["attrs"]["data-line"]) for e in dom.having("omitted", raw)}
    expected: set[int] = set()
    for spec in json.loads(chosen["output"])["content"]:
        start, _, end = spec.split(":")[0].partition("-")
        expected |= set(range(int(start), int(end or start) + 1))
    assert omitted == expected and omitted

    # every candidate, with its judged action, score and verdict; the rendered text as in Parquet
    boxes = [b for b in dom.having("cand", dom.by_id("candidates"))]
    assert [int(b["attrs"]["data-index"]) for b in boxes] == [
        c["candidate_index"] for c in step["candidates"]
    ]
    verdicts = {j["candidate_index"]: j for j in step["judgements"]}
    for box, cand in zip(boxes, step["candidates"], strict=True):
        assert box["attrs"]["data-source"] == cand["source"]
        badge = dom.having("verdict", box)
        j = verdicts.get(cand["candidate_index"])
        if j is None:
            assert not badge
            continue
        assert badge[0]["text"].startswith("PASS" if j["passed"] else "FAIL")
        assert f"score {j['aggregate']:.3f}" in box["text"]
        if j["action"] is not None:
            assert (j["action"]["command"] or "") in box["text"]
    rendered_box = boxes[
        [c["candidate_index"] for c in step["candidates"]].index(chosen["candidate_index"])
    ]
    shown = [e["text"] for e in dom.having("ln", rendered_box)]
    assert shown == [f"{t}" for t in chosen["rendered"].split("\n")]
    assert dom.having("placeholder", rendered_box)

    # references and the selected targets
    refs = dom.having("ref", dom.by_id("references"))
    assert len(refs) == len(step["references"])
    for ref, row in zip(
        refs, sorted(step["references"], key=lambda r: r["reference_index"]), strict=True
    ):
        assert (row["action"]["command"] if row["action"] else "(format error)") in ref["text"]
    targets = dom.having("target", dom.by_id("selected"))
    assert len(targets) == len(step["supervision"])
    for target, row in zip(targets, step["supervision"], strict=True):
        assert row["target"] in target["text"]
    # the eval section holds both compressors' verdicts for this step
    cells = {e["text"] for e in dom.having("mono", dom.by_id("eval")) if e["tag"] == "td"}
    assert {"unchanged", "omit"} <= cells

    shot = screenshot(browser, url, tmp_path / "view.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("NAP_VIEW_SCREENSHOT"):
        shutil.copy(shot, os.environ["NAP_VIEW_SCREENSHOT"])


def test_filters_list_only_matching_steps(run_out: Path) -> None:
    browser = chromium_or_skip()
    steps = pl.read_parquet(run_out / "steps" / "*.parquet").filter(pl.col("eligible"))
    dom = Dom()
    dom.feed(dump_dom(browser, (run_out / "view.html").resolve().as_uri()))
    assert dom.by_id("count")["text"] == f"{steps.height} of {steps.height} steps"
    rows = dom.having("row")
    assert len(rows) == min(steps.height, 50)
    options = {e["attrs"]["value"] for e in dom.elements if e["tag"] == "option" and
               any(p["attrs"].get("id") == "filter-src" for p in e["parents"])}  # fmt: skip
    sources = set(pl.read_parquet(run_out / "candidates" / "*.parquet")["source"])
    assert options == {"", *sources}
