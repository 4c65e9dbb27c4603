"""Deployed runs as input: the raw tool output logged beside what the agent saw (mini-swe-agent
`extra.raw_output`, chat rows `raw_output`) becomes the step's observation, the logged text
its `deployed_observation`; checked against the sample files read with `json`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from builder.ingest.parallel import InputSpec, run_ingest
from builder.scrub import Scrubber
from schemas.trajectories import Message
from tests.ingest.deployed_sample import DEPLOYED, made
from tests.paths import SAMPLES
from tests.scrub.corpus import ALNUM, mixed

_OUTPUT = re.compile(r"<output>\n?(.*)</output>", re.DOTALL)


def _logged(path: Path) -> list[tuple[str, str]]:
    """(raw output, payload the agent saw) of every observation logged with a raw output."""
    text = path.read_text()
    docs = (
        [json.loads(x) for x in text.splitlines()]
        if path.suffix == ".jsonl"
        else [json.loads(text)]
    )
    found = []
    for doc in docs:
        for message in doc["messages"]:
            raw = message.get("raw_output", (message.get("extra") or {}).get("raw_output"))
            if raw is not None:
                inner = _OUTPUT.search(message["content"])
                found.append((raw, inner.group(1) if inner else message["content"]))
    return found


def test_the_shipped_deployed_samples_are_what_the_sample_maker_makes() -> None:
    shipped = {p: p.read_text(encoding="utf-8") for p in DEPLOYED.rglob("*") if p.is_file()}
    shipped = {p: t for p, t in shipped.items() if p.suffix != ".md"}
    assert shipped == made(), "run: python -m tests.ingest.deployed_sample --write"


def test_a_deployed_run_ingests_with_raw_observations_and_the_text_the_agent_saw(
    tmp_path: Path,
) -> None:
    run_ingest([InputSpec(str(DEPLOYED))], tmp_path, workers=1)
    steps = pl.read_parquet(tmp_path / "steps" / "*.parquet")
    logged = [pair for path in sorted(DEPLOYED.rglob("*.json*")) for pair in _logged(path)]
    got = sorted(zip(steps["observation"], steps["deployed_observation"], strict=True))
    assert got == sorted(logged)
    changed = sum(raw != shown for raw, shown in logged)
    assert 0 < changed < len(logged)
    assert sum(o != d for o, d in got) == changed

    # the same runs without a compressor give the same raw observations
    plain = tmp_path / "plain"
    run_ingest([InputSpec(str(SAMPLES))], plain, workers=1)
    raw_steps = pl.read_parquet(plain / "steps" / "*.parquet")
    assert sorted(raw_steps["observation"]) == sorted(steps["observation"])
    assert raw_steps["deployed_observation"].null_count() == raw_steps.height


def test_a_raw_output_that_is_not_text_quarantines_its_record_and_says_where(
    tmp_path: Path,
) -> None:
    source = DEPLOYED / "chat-messages" / "textstats.jsonl"
    row = json.loads(source.read_text().splitlines()[0])
    row["messages"][5]["raw_output"] = {"stdout": "x"}
    bad = tmp_path / "in" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_text(json.dumps(row) + "\n" + source.read_text())
    run_ingest([InputSpec(str(bad.parent))], tmp_path / "out", workers=1)
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine" / "*.parquet")
    [message] = quarantine["message"].to_list()
    assert "bad.jsonl" in message and "message 5" in message and "raw_output is dict" in message
    kept = pl.read_parquet(tmp_path / "out" / "trajectories" / "*.parquet")
    assert kept.height == 1  # the good line of the file is ingested


def test_a_secret_in_a_raw_output_is_scrubbed_before_any_model_sees_it() -> None:
    token = "ghp_" + mixed(ALNUM, 36)
    message = Message("user", "[output compressed]", raw_output=f"export GITHUB_TOKEN={token}")
    scrubbed = Scrubber().scrub_message(message)
    assert scrubbed.raw_output is not None and token not in scrubbed.raw_output
