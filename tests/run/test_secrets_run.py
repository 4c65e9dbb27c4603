"""Secrets seeded into trajectories never reach a model request, a table or a published file.

The seeds are the 40-kind scrubbing corpus (tests/scrub/corpus.py). Requests are read as the
scripted endpoint received them; tables and published shards are read back with pyarrow
(Parquet pages are compressed: a byte search of the files would prove nothing).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.paths import SAMPLES
from tests.run.nap_server import nap_server, run_config
from tests.scrub.corpus import SEEDED

NAP_TABLES = ("candidates", "references", "judgements", "supervision", "preferences")
KINDS = sorted({kind for kind, _, _ in SEEDED})
VALUES = [value for _, value, _ in SEEDED]
LEAK = "\n\n".join(template.format(v=value) for _, value, template in SEEDED)
COMMAND_KINDS = ("bearer_token", "cli_password")


def _command() -> str:
    """One shell command carrying a bearer token and a password on the command line."""
    bearer = next(t.format(v=v) for k, v, t in SEEDED if k == "bearer_token")
    mysql = next(t.format(v=v) for k, v, t in SEEDED if k == "cli_password")
    return f"curl {bearer[3:-1]} localhost && {mysql}"


def _seeded_corpus(root: Path) -> Path:
    """The project's sample trajectory with every secret in the task, observations and a command."""
    doc = json.loads((SAMPLES / "mini-swe-agent/textstats__empty-summary.traj.json").read_text())
    messages = doc["messages"]
    messages[1]["content"] = messages[1]["content"].replace(
        "</pr_description>", f"config dump:\n{LEAK}\n</pr_description>"
    )
    for message in messages[3::2]:  # every observation
        message["content"] = message["content"].replace("</output>", f"{LEAK}\n</output>")
    messages[4]["content"] = messages[4]["content"].replace("nl -ba textstats/stats.py", _command())
    root.mkdir()
    (root / "seeded.traj.json").write_text(json.dumps(doc))
    return root


def strings(value: Any) -> list[str]:
    """Every string inside a value, and inside strings that are JSON documents."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return [value]
        return [value, *strings(decoded)] if isinstance(decoded, dict | list) else [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def leaked(texts: list[str]) -> list[str]:
    """The seeded values found in `texts` (a short prefix of each, for the message)."""
    return [v[:16] for v in VALUES if any(v in t for t in texts)]


def parquet_strings(paths: list[Path]) -> list[str]:
    return [s for p in paths for s in strings(pq.read_table(p).to_pylist())]


def test_no_seeded_secret_reaches_requests_tables_or_the_published_dataset(tmp_path: Path) -> None:
    corpus = _seeded_corpus(tmp_path / "corpus")
    raw = strings(json.loads((corpus / "seeded.traj.json").read_text()))
    assert len(KINDS) >= 40 and leaked(raw) == [v[:16] for v in VALUES]  # the seeds are there
    out = tmp_path / "out"
    with nap_server() as server:
        config = tmp_path / "cfg.yaml"
        config.write_text(run_config(corpus, server.base_url, out))
        run = subprocess.run(
            [sys.executable, "-m", "builder.cli", "run", str(config)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        requests = strings(list(server.requests))
    assert len(server.requests) > 5
    assert leaked(requests) == [], "a request carried these"
    # the scrubbed text did travel: every kind's placeholder reached the endpoint
    sent = "\0".join(requests)
    assert [k for k in KINDS if f"[REDACTED:{k}]" not in sent] == []

    tables = [p for t in NAP_TABLES for p in sorted((out / t).glob("*.parquet"))]
    assert {p.parent.name for p in tables} == set(NAP_TABLES)
    table_text = parquet_strings(tables)
    assert any("[REDACTED:" in s for s in table_text)
    assert leaked(table_text) == [], "an output table carries these"
    side = [p for p in out.iterdir() if p.is_file() and p.suffix in (".json", ".md", ".yaml")]
    assert leaked([p.read_text() for p in side]) == []
    # the response cache (responses only; the scripted agent echoes commands it was sent)
    caches = list(out.rglob("*.sqlite"))
    assert caches
    for path in caches:
        with sqlite3.connect(path) as db:
            payloads = [row[0] for row in db.execute("SELECT payload FROM responses")]
        assert payloads and leaked(strings(payloads)) == []

    report = json.loads((out / "report.json").read_text())
    redactions = report["redactions"]
    assert sorted(redactions) == KINDS
    per_pass = Counter(kind for kind, _, _ in SEEDED)  # every kind at least once per seeded copy
    assert all(redactions[k] >= per_pass[k] for k in KINDS)

    published = tmp_path / "dataset"
    done = subprocess.run(
        [sys.executable, "-m", "builder.cli", "publish", str(out), "--to", str(published)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shards = sorted(published.rglob("*.parquet"))
    assert shards
    assert leaked(parquet_strings(shards)) == [], "a published shard carries these"
    texts = [p for p in published.rglob("*") if p.is_file() and p.suffix in (".md", ".json")]
    assert leaked([p.read_text() for p in texts]) == []
    assert leaked([done.stdout, done.stderr, run.stdout, run.stderr]) == []
