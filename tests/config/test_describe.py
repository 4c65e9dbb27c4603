"""`nap-builder config`: every key with its meaning, value and source; the README's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.cli import main
from builder.config import config_hash, load_config
from builder.config.describe import key_rows
from tests.config_table import readme_with_table
from tests.layout_map import REPO

OPENAI = REPO / "pipelines" / "openai.yaml"


def test_every_key_has_a_type_a_default_and_a_description() -> None:
    rows = key_rows()
    assert len(rows) > 80
    missing = [r.key for r in rows if not r.description or not r.type or not r.default]
    assert missing == []


def test_the_readme_table_is_generated_from_the_models() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme == readme_with_table(readme), "run: python -m tests.config_table --write"


def test_config_lists_every_key_with_its_value_and_where_it_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["config", str(OPENAI), "--set", "gate.threshold=0.7"]) == 0
    out = capsys.readouterr().out
    listed = [
        line.split(" = ")[0]
        for line in out.splitlines()
        if not line.startswith(" ") and " = " in line
    ]
    assert listed == [r.key for r in key_rows()]
    assert "gate.threshold = 0.7    (--set)" in out
    assert "limits.concurrency = 32    (file, not in the config hash)" in out
    assert "selection.exhaustive = false    (default)" in out
    assert f"{len(listed)} keys" in out


def test_a_key_prefix_narrows_the_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", str(OPENAI), "--key", "limits."]) == 0
    out = capsys.readouterr().out
    keys = [ln.split(" = ")[0] for ln in out.splitlines() if not ln.startswith(" ") and " = " in ln]
    assert keys and all(k.startswith("limits.") for k in keys)


def test_without_a_config_the_defaults_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--key", "references.samples"]) == 0
    assert "references.samples = 8    (default)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("key", "value"),
    [("limits.concurrency", "3"), ("gate.threshold", "0.9"), ("output.log_every_s", "5")],
)
def test_the_hash_column_says_whether_a_change_changes_the_config_hash(
    tmp_path: Path, key: str, value: str
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f"inputs: [{{path: {tmp_path}}}]\n")
    before = config_hash(load_config(config))
    after = config_hash(load_config(config, [f"{key}={value}"]))
    [row] = [r for r in key_rows() if r.key == key]
    assert (before != after) == row.in_hash
