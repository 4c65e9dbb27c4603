"""Online rounds against the scripted endpoint, checked in its request log: what the agent was
sent for each judged step, read from the HTTP bodies and compared with the raw sample files
(read with `json`) and the rule's own outputs.

- `replay.prefix: compressed` with `rule:head_tail`: every earlier eligible observation the rule
  changes carries its output, every other message is as logged, and step t's observation is
  raw for the references and a candidate for judging; a resume sends nothing.
- `replay.prefix: deployed` on the deployed-run samples: exactly the steps whose logged text
  differs from the raw output are relabelled, in the logged context with step t restored to
  raw, and the deployed compressor's per-step pass rate is reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from builder.cli import main
from builder.ingest.formats import get_adapter
from builder.nap.prefix import with_prefixes
from builder.nap.types import StepJob
from builder.steps.replay import agent_context
from builder.teacher.candidates import rule_candidates
from builder.teacher.prompt import PROMPT_VERSION
from schemas.common import from_row
from schemas.prefixes import PrefixRecord
from schemas.steps import StepRecord
from schemas.trajectories import TrajectoryRecord
from tests.llm.servers import FakeAPIServer, status
from tests.paths import REPO, SAMPLES
from tests.run.nap_server import nap_server, nap_text, run_config

DEPLOYED = REPO / "builder" / "deployed_samples"
REFERENCE_TEMPERATURE = 0.7  # run_config's references: sampled, 2 samples at the default 0.7
_OUTPUT = re.compile(r"<output>\n?(.*)</output>", re.DOTALL)


@pytest.fixture(scope="module")
def server() -> FakeAPIServer:
    with nap_server() as srv:
        yield srv


def _run(tmp: Path, server: FakeAPIServer, corpus: Path, **extra: Any) -> tuple[Path, list]:
    """Run the config; returns its folder and the request bodies it sent."""
    out = tmp / "out"
    config = tmp / "config.yaml"
    config.write_text(run_config(corpus, server.base_url, out, **extra))
    before = server.count
    assert main(["run", str(config)]) == 0
    return out, server.requests[before:]


def _raw_documents(corpus: Path) -> list[list[dict[str, Any]]]:
    """The message lists of every trajectory in the corpus, read with `json`."""
    docs = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix == ".jsonl":
            docs += [json.loads(line)["messages"] for line in path.read_text().splitlines()]
        elif path.name.endswith(".traj.json"):
            docs.append(json.loads(path.read_text())["messages"])
    return docs


def _document_of(request: dict[str, Any], docs: list[list[dict[str, Any]]]) -> list[dict]:
    """The trajectory a request replays: the one whose task message it carries."""
    [doc] = [d for d in docs if d[1]["content"] == request["messages"][1]["content"]]
    return doc


def _agent_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if not r.get("response_format")]


def _steps(out: Path) -> dict[tuple[str, int], StepRecord]:
    """Eligible steps by (task message, observation message index), from the run's inputs."""
    trajectories = pl.read_parquet(out / "trajectories" / "*.parquet")
    task = {
        row["trajectory_id"]: row["messages"][1]["content"]
        for row in trajectories.select("trajectory_id", "messages").to_dicts()
    }
    steps = pl.read_parquet(out / "steps" / "*.parquet").filter(pl.col("eligible"))
    return {
        (task[r["trajectory_id"]], r["observation_message_index"]): from_row(StepRecord, r)
        for r in steps.to_dicts()
    }


def test_a_prefix_compressed_run_shows_the_rule_output_before_t_and_the_raw_observation_at_t(
    tmp_path: Path, server: FakeAPIServer
) -> None:
    replay = {"prefix": "compressed", "prefix_compressor": "rule:head_tail"}
    out, requests = _run(tmp_path, server, SAMPLES, replay=replay)
    docs = _raw_documents(SAMPLES)
    steps = _steps(out)
    # what head_tail makes of each eligible observation, from the raw text (rule registry)
    compressed = {}
    for key, step in steps.items():
        [row] = rule_candidates(step, ["head_tail"], prompt_version=PROMPT_VERSION)
        if row.valid and row.rendered != step.observation:
            compressed[key] = (step.observation, row.rendered)
    assert compressed, "the rule must change some observation, or the test shows nothing"
    candidates = pl.read_parquet(out / "candidates" / "*.parquet")
    rendered = {(r["trajectory_id"], r["step_index"], r["rendered"]) for r in candidates.to_dicts()}

    seen_compressed = references = judged = 0
    for request in _agent_requests(requests):
        messages, doc = request["messages"], _document_of(request, docs)
        task, t = messages[1]["content"], len(messages) - 1
        step = steps[(task, t)]
        for i, message in enumerate(messages[:t]):
            if (task, i) in compressed:
                raw, shown = compressed[(task, i)]
                assert message["content"] == doc[i]["content"].replace(raw, shown)
                assert message["content"] != doc[i]["content"]
                seen_compressed += 1
            else:
                assert message["content"] == doc[i]["content"], (t, i)
        if request.get("temperature") == REFERENCE_TEMPERATURE:
            assert messages[t]["content"] == doc[t]["content"]  # references: raw at t
            references += 1
        else:
            payload = messages[t]["content"]
            inner = _OUTPUT.search(payload)
            shown = inner.group(1) if inner and "<returncode>" in payload else payload
            key = (step.trajectory_id, step.step_index, shown)
            assert key in rendered or messages[t]["content"] == doc[t]["content"]  # or control
            judged += 1
    assert seen_compressed and references and judged

    recorded = pl.read_parquet(out / "prefixes" / "*.parquet")
    by_key = {(r["trajectory_id"], r["step_index"]): r for r in recorded.to_dicts()}
    for key, (_raw, shown) in compressed.items():
        step = steps[key]
        if (step.trajectory_id, step.step_index) in by_key:  # the last eligible step has none
            assert by_key[(step.trajectory_id, step.step_index)]["shown"] == shown
    _rebuilt_contexts_equal_what_was_sent(out, requests)
    rounds = pl.read_parquet(out / "round_steps" / "*.parquet")
    assert set(rounds["round"]) == {1} and set(rounds["prefix_mode"]) == {"compressed"}
    assert set(rounds["prefix_compressor"]) == {"rule:head_tail"}
    for table in ("candidates", "references", "judgements", "supervision", "preferences"):
        frame = pl.read_parquet(out / table / "*.parquet")
        assert set(frame["round"]) == {1} and set(frame["prefix_mode"]) == {"compressed"}, table

    before = server.count
    assert main(["run", str(tmp_path / "config.yaml")]) == 0
    assert server.count == before  # the resume sends nothing: compressions are recorded


def _rebuilt_contexts_equal_what_was_sent(out: Path, requests: list[dict[str, Any]]) -> None:
    """The reference context of every step, rebuilt from the run's tables alone
    (`trajectories`, `steps`, `prefixes`), is the one the references were asked in."""
    trajectories = {
        r["trajectory_id"]: from_row(TrajectoryRecord, r)
        for r in pl.read_parquet(out / "trajectories" / "*.parquet").to_dicts()
    }
    steps = pl.read_parquet(out / "steps" / "*.parquet").filter(pl.col("eligible"))
    jobs = []
    for row in steps.to_dicts():
        traj = trajectories[row["trajectory_id"]]
        jobs.append(StepJob(traj, from_row(StepRecord, row), get_adapter(traj.source_format)))
    recorded = pl.read_parquet(out / "prefixes" / "*.parquet").to_dicts()
    rows = [from_row(PrefixRecord, r) for r in recorded]
    sent = {
        tuple(m["content"] for m in r["messages"])
        for r in _agent_requests(requests)
        if r.get("temperature") == REFERENCE_TEMPERATURE
    }
    rebuilt = set()
    for item in with_prefixes(jobs, rows):
        context = agent_context(
            item.job.traj, item.job.step, item.job.adapter, None, item.job.prefix
        )
        rebuilt.add(tuple(m.content for m in context))
    assert rebuilt == sent


def _changed(doc: list[dict[str, Any]]) -> dict[int, tuple[str, str]]:
    """Observation messages a deployed run logged with a raw output that differs from what
    the agent saw: index -> (raw output, the payload shown), read from the file alone."""
    found = {}
    for i, message in enumerate(doc):
        raw = message.get("raw_output", (message.get("extra") or {}).get("raw_output"))
        if raw is None:
            continue
        inner = _OUTPUT.search(message["content"])
        shown = (
            inner.group(1) if inner and "<returncode>" in message["content"] else message["content"]
        )
        if shown != raw:
            found[i] = (raw, shown)
    return found


def test_a_deployed_run_relabels_exactly_the_changed_steps_in_the_logged_context(
    tmp_path: Path, server: FakeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    out, requests = _run(tmp_path, server, DEPLOYED, replay={"prefix": "deployed"})
    docs = _raw_documents(DEPLOYED)
    changed = {(d[1]["content"], i): c for d in docs for i, c in _changed(d).items()}
    steps = _steps(out)
    expected = {key for key in steps if key in changed}
    assert expected and len(expected) < len(steps)  # some steps changed, others not

    rounds = pl.read_parquet(out / "round_steps" / "*.parquet")
    by_id = {(s.trajectory_id, s.step_index): key for key, s in steps.items()}
    relabelled = {by_id[(r["trajectory_id"], r["step_index"])] for r in rounds.to_dicts()
                  if r["processed"]}  # fmt: skip
    assert relabelled == expected
    asked = set()
    for request in _agent_requests(requests):
        messages, doc = request["messages"], _document_of(request, docs)
        task, t = messages[1]["content"], len(messages) - 1
        asked.add((task, t))
        for i, message in enumerate(messages[:t]):
            assert message["content"] == doc[i]["content"], (t, i)  # as the deployed agent saw
        if request.get("temperature") == REFERENCE_TEMPERATURE:
            raw, shown = changed[(task, t)]
            assert messages[t]["content"] == doc[t]["content"].replace(shown, raw)
    assert asked == expected  # no request for a step the compressor left unchanged

    judged = rounds.filter(pl.col("deployed_passed").is_not_null())
    assert judged.height == len(expected)
    passed = int(judged["deployed_passed"].sum())
    report = json.loads((out / "report.json").read_text())
    deployed = report["round"]["deployed"]
    assert deployed == {
        "changed_steps": len(expected),
        "unchanged_steps": len(steps) - len(expected),
        "judged_steps": len(expected),
        "passed_steps": passed,
        "pass_rate": passed / len(expected),
    }
    printed = capsys.readouterr().out
    assert f"passed the gate on {passed}/{len(expected)} steps it changed" in printed


def test_an_endpoint_prefix_compressor_is_asked_once_per_observation_and_a_redo_is_free(
    tmp_path: Path, server: FakeAPIServer
) -> None:
    replay = {"prefix": "compressed", "prefix_compressor": "endpoint"}
    compressor = {"provider": "openai", "model": "trained-compressor", "base_url": server.base_url}
    out, requests = _run(tmp_path, server, SAMPLES, replay=replay, compressor=compressor)
    asked = [r for r in requests if r.get("model") == "trained-compressor"]
    recorded = pl.read_parquet(out / "prefixes" / "*.parquet")
    assert len(asked) == recorded.height > 0  # one request per observation a prefix shows
    assert set(recorded["compressor_id"]) == {"endpoint:trained-compressor"}
    tables = {t: pl.read_parquet(out / t / "*.parquet") for t in ("prefixes", "supervision")}
    for marker in (out / "_state" / "shards").glob("*.json"):
        marker.unlink()  # every shard redone: the compressions come from the request cache
    before = server.count
    assert main(["run", str(tmp_path / "config.yaml")]) == 0
    assert server.count == before
    for table, frame in tables.items():
        again = pl.read_parquet(out / table / "*.parquet")
        assert again.sort("trajectory_id", "step_index").equals(
            frame.sort("trajectory_id", "step_index")
        )


def test_a_prefix_compression_that_fails_gives_up_only_the_steps_after_it(
    tmp_path: Path, server: FakeAPIServer
) -> None:
    replay = {"prefix": "compressed", "prefix_compressor": "endpoint"}
    limits = {"max_retries": 0}
    failing = FakeAPIServer(faults=[status(500)] * 50, text=nap_text)
    with failing:
        compressor = {"provider": "openai", "model": "c", "base_url": failing.base_url}
        config = tmp_path / "config.yaml"
        config.write_text(
            run_config(SAMPLES, server.base_url, tmp_path / "out", replay=replay,
                       compressor=compressor, limits=limits)
        )  # fmt: skip
        assert main(["run", str(config)]) == 3  # incomplete shards: the same command redoes them
    rounds = pl.read_parquet(tmp_path / "out" / "round_steps" / "*.parquet")
    first = rounds.group_by("trajectory_id").agg(pl.col("step_index").min().alias("first"))
    rounds = rounds.join(first, on="trajectory_id")
    later = rounds.filter(pl.col("step_index") > pl.col("first"))
    assert later.height and all(d.startswith("request_failed:prefix:") for d in later["dropped"])
    earliest = rounds.filter(pl.col("step_index") == pl.col("first"))
    assert earliest["supervision_rows"].sum() > 0  # no prefix needed: judged as usual

    # the compressor back (a local server on another port is the same endpoint): resumed
    compressor["base_url"] = server.base_url
    config.write_text(
        run_config(SAMPLES, server.base_url, tmp_path / "out", replay=replay,
                   compressor=compressor, limits=limits)
    )  # fmt: skip
    assert main(["run", str(config)]) == 0
    rounds = pl.read_parquet(tmp_path / "out" / "round_steps" / "*.parquet")
    assert not any((d or "").startswith("request_failed") for d in rounds["dropped"])
