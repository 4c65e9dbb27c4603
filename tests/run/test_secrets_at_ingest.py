"""Scrubbing at ingest: no file of a run folder, no request and no cache entry holds a raw secret.

Every kind of the secrets benchmark (tests/scrub/kinds.py, 120+ vendor formats and context
forms) is seeded into a real sample trajectory: the task, every observation and the commands.
The run goes against the scripted endpoint; then every file under the run folder is read as
what it is (Parquet tables through pyarrow, SQLite databases row by row, everything else as
text) and searched for any 16-character stretch of any seeded value, as are the request bodies
the endpoint received and the command's output. With `scrub.raw_tables: true` the tables keep
the raw text and the requests are still clean.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config
from tests.run.test_secrets_run import strings
from tests.scrub.kinds import KINDS, leaked

LEAK = "\n\n".join(kind.text for kind in KINDS)
BY_NAME = {kind.name: kind for kind in KINDS}


def _seeded(root: Path) -> Path:
    doc = json.loads((SAMPLES / "mini-swe-agent/textstats__empty-summary.traj.json").read_text())
    messages = doc["messages"]
    messages[1]["content"] = messages[1]["content"].replace(
        "</pr_description>", f"config dump:\n{LEAK}\n</pr_description>"
    )
    for message in messages[3::2]:  # every observation
        message["content"] = message["content"].replace("</output>", f"{LEAK}\n</output>")
    command = " && ".join(
        BY_NAME[name].text for name in ("curl_user_password", "docker_login_password")
    )
    messages[4]["content"] = messages[4]["content"].replace("nl -ba textstats/stats.py", command)
    root.mkdir()
    (root / "seeded.traj.json").write_text(json.dumps(doc))
    return root


def _file_texts(out: Path) -> dict[Path, list[str]]:
    """Every file of the run folder, read as what it is."""
    texts: dict[Path, list[str]] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            texts[path] = strings(pq.read_table(path).to_pylist())
        elif path.suffix == ".sqlite":
            with sqlite3.connect(path) as db:
                names = [
                    r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                ]
                rows = [row for name in names for row in db.execute(f'SELECT * FROM "{name}"')]
            texts[path] = strings([[str(v) for v in row] for row in rows])
        else:  # JSON, YAML, markdown, SVG, logs, SQLite journals: as bytes decoded
            texts[path] = [path.read_bytes().decode("utf-8", errors="replace")]
    return texts


def _leaks(texts: list[str]) -> list[str]:
    joined = "\0".join(texts)
    return [kind.name for kind in KINDS if leaked(kind.value, joined)]


def _run(tmp_path: Path, **extra: object) -> tuple[Path, list[str], str]:
    corpus = _seeded(tmp_path / "corpus")
    raw = "\0".join(strings(json.loads((corpus / "seeded.traj.json").read_text())))
    assert _leaks([raw]) == [k.name for k in KINDS]  # every seed is in the input
    out = tmp_path / "out"
    with nap_server() as server:
        config = tmp_path / "cfg.yaml"
        config.write_text(run_config(corpus, server.base_url, out, **extra))
        done = subprocess.run(
            [sys.executable, "-m", "builder.cli", "run", str(config)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        requests = strings(list(server.requests))
    assert len(requests) > 5
    return out, requests, done.stdout + done.stderr


@pytest.mark.timeout(900)
def test_no_file_of_the_run_folder_no_request_and_no_cache_holds_a_raw_secret(
    tmp_path: Path,
) -> None:
    out, requests, output = _run(tmp_path)
    files = _file_texts(out)
    kinds = {p.relative_to(out).parts[0] for p in files}
    assert {"trajectories", "steps", "candidates", "cache", "run.log"} <= kinds
    assert {p: found for p, texts in files.items() if (found := _leaks(texts))} == {}
    assert _leaks(requests) == [], "a request carried these"
    assert _leaks([output]) == []
    steps = files[next(p for p in files if p.parts[-2] == "steps")]
    assert any("[REDACTED:" in s for s in steps)  # the steps were scrubbed, not emptied
    summary = json.loads((out / "ingest_summary.json").read_text())
    report = json.loads((out / "report.json").read_text())
    assert report["redactions"] == summary["redactions"]
    assert sum(summary["redactions"].values()) >= len(KINDS)


@pytest.mark.timeout(900)
def test_raw_tables_keep_the_text_and_requests_are_still_scrubbed(tmp_path: Path) -> None:
    out, requests, _ = _run(tmp_path, scrub={"raw_tables": True})
    trajectories = strings(pq.read_table(out / "trajectories").to_pylist())
    assert len(_leaks(trajectories)) == len(KINDS)  # kept raw, as asked
    assert _leaks(requests) == []
    summary = json.loads((out / "ingest_summary.json").read_text())
    assert "redactions" not in summary
    assert json.loads((out / "report.json").read_text())["redactions"]  # counted per shard
