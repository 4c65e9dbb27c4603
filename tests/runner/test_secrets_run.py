"""Secrets seeded into trajectories never reach a model request, a table or a published file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.paths import SAMPLES
from tests.runner.nap_server import nap_server, run_config

# 22 kinds of credentials, fake values with realistic shapes.
SECRETS = {
    "aws_access_key": "AKIAQ3EGRTYUIOPASD7X",
    "aws_secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8W2T4KEY",
    "github_token": "ghp_4f8ZyQ2mW7pLx9kVb3nR6tH1sJ0cD5eA8gU2",
    "github_pat": "github_pat_11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXYZabcdefghij0123456789KLMNOPQRSTUVWXY",
    "openai_key": "sk-proj-Q9xT3vB7nM2kL8pR4wZ6yH1cF5gJ0dS9aE3uI7oP2qW4rT6y",
    "anthropic_key": "sk-ant-api03-h7Jk2Lm9Np4Qr6St8Uv1Wx3Yz5Ab7Cd9Ef2Gh4Ij6Kl8Mn0Op2Qr4St6Uv8Wx0Yz2Ab4Cd6Ef8Gh0IjAA",
    "hf_token": "hf_qWeRt7uIoPaS3FgHjKl9xCvBnMqWe4tYu1",
    "slack_token": "xoxb-2401234567-5012345678901-aBcDeFgHiJkLmNoPqRsTuVwX",
    "stripe_key": "sk_live_51HcQeR2eZvKYlo2C9xYzAbCdEfGhIjKl",
    "google_api_key": "AIzaSyD4f9Xh2Kq8Lm3Np7Rs1Tv5Wx9Yz2Ab4Cd",
    "gitlab_token": "glpat-x7Yk2Lm9Np4Qr6St8Uv1W",
    "npm_token": "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "pypi_token": "pypi-AgEIcHlwaS5vcmcCJGE4ZjY3MzE5LWQ2ZmQtNGE2Ny04YjE3LTEyMzQ1Njc4OTBhYgACKlszLCJlYjYyMzQ1Ni1hYmNkIl1dAAIsWzIseyJwcm9qZWN0cyI6WyJmb28iXX1dAAAGIHh5enh5enh5",
    "sendgrid_key": "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "url_password": "postgres://admin:Sup3rS3cretPassw0rd@db.internal:5432/app",
    "env_password": "DB_PASSWORD=hunter2-Very-Secret-99",
    "env_secret_key": "SECRET_KEY=9f8e7d6c5b4a39281726354453627180abcd",
    "bearer": "Authorization: Bearer abcdef0123456789abcdef0123456789abcd",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3Xk9yP2sL4mN8qR1tV6wX0zA3cE5gH7jK9lM2nO4pQ6rS\n8tU0vW2xY4zA6bC8dE0fG2hI4jK6lM8nO0pQ2rS4tU6vW8xY0zA2bC4dE6fG8hI0\n-----END RSA PRIVATE KEY-----",
    "twilio_key": "SK2f8e6d4c2b0a98765432100fedcba987",
    "mailgun_key": "key-3a16b5d29fd6f0d4c73b3e8a9f0c7d21",
}
VALUES = [
    "AKIAQ3EGRTYUIOPASD7X",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8W2T4KEY",
    "ghp_4f8ZyQ2mW7pLx9kVb3nR6tH1sJ0cD5eA8gU2",
    SECRETS["github_pat"],
    SECRETS["openai_key"],
    SECRETS["anthropic_key"],
    SECRETS["hf_token"],
    SECRETS["slack_token"],
    SECRETS["stripe_key"],
    SECRETS["google_api_key"],
    SECRETS["gitlab_token"],
    SECRETS["npm_token"],
    SECRETS["pypi_token"],
    SECRETS["sendgrid_key"],
    SECRETS["jwt"],
    "Sup3rS3cretPassw0rd",
    "hunter2-Very-Secret-99",
    "9f8e7d6c5b4a39281726354453627180abcd",
    "abcdef0123456789abcdef0123456789abcd",
    "MIIEowIBAAKCAQEA7bq3Xk9yP2sL4mN8qR1tV6wX0zA3cE5gH7jK9lM2nO4pQ6rS",
    "SK2f8e6d4c2b0a98765432100fedcba987",
    "key-3a16b5d29fd6f0d4c73b3e8a9f0c7d21",
]


def _seeded_corpus(root: Path) -> Path:
    """The project's sample trajectory with every secret in observations, commands and the task."""
    doc = json.loads((SAMPLES / "mini-swe-agent/textstats__empty-summary.traj.json").read_text())
    leak = "\n".join(f"{kind}: {value}" for kind, value in SECRETS.items())
    messages = doc["messages"]
    messages[1]["content"] = messages[1]["content"].replace(
        "</pr_description>", f"config dump:\n{leak}\n</pr_description>"
    )
    for message in messages[3::2]:  # every observation
        message["content"] = message["content"].replace("</output>", f"{leak}\n</output>")
    messages[4]["content"] = messages[4]["content"].replace(
        "nl -ba textstats/stats.py", f"curl -H 'Authorization: Bearer {VALUES[18]}' localhost"
    )
    root.mkdir()
    (root / "seeded.traj.json").write_text(json.dumps(doc))
    return root


def test_no_seeded_secret_reaches_requests_tables_or_the_published_dataset(tmp_path: Path) -> None:
    corpus = _seeded_corpus(tmp_path / "corpus")
    raw = (corpus / "seeded.traj.json").read_text()
    assert all(json.dumps(v)[1:-1] in raw for v in VALUES)  # the seeds are really there
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
        bodies = json.dumps(server.requests)
    assert len(server.requests) > 5
    published = tmp_path / "dataset"
    done = subprocess.run(
        [sys.executable, "-m", "builder.cli", "publish", str(out), "--to", str(published)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    files = [p for p in published.rglob("*") if p.is_file()]
    nap_tables = [
        p
        for t in ("candidates", "references", "judgements", "supervision", "preferences")
        for p in (out / t).glob("*.parquet")
    ]
    assert files and nap_tables
    for value in VALUES:
        assert value not in bodies, f"a request carried {value[:12]}..."
        for path in (*files, *nap_tables):
            assert value.encode() not in path.read_bytes(), f"{path} carries {value[:12]}..."
    report = json.loads((out / "report.json").read_text())
    redactions = report["redactions"]
    assert sum(redactions.values()) >= len(SECRETS)
    assert "[REDACTED:" in bodies  # the text is still there, with placeholders
