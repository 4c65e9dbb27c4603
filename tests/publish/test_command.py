"""`nap-builder publish` end to end through the CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder.cli import main
from builder.publish.command import read_settings
from builder.publish.layout import iter_folder_files
from tests.publish.hub_server import HubServer
from tests.publish.publish_fixtures import TOKEN


def test_publish_to_a_folder_uses_the_runs_split_settings(
    run_output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resolved = yaml.safe_load((run_output / "config.resolved.yaml").read_text())
    resolved["publish"] = {"splits": {"train": 0.5, "test": 0.5}, "license": "apache-2.0"}
    (run_output / "config.resolved.yaml").write_text(yaml.safe_dump(resolved))
    dest = tmp_path / "ds"
    assert main(["publish", str(run_output), "--to", str(dest)]) == 0
    splits = {p.name.split("-")[0] for p in (dest / "data").rglob("*.parquet")}
    assert splits == {"train", "test"}
    assert "license: apache-2.0" in (dest / "README.md").read_text()
    out = capsys.readouterr().out
    assert f"wrote {dest}" in out and "redacted: github_token 160" in out


def test_dry_run_to_a_folder_writes_nothing(run_output: Path, tmp_path: Path) -> None:
    dest = tmp_path / "ds"
    assert main(["publish", str(run_output), "--to", str(dest), "--dry-run"]) == 0
    assert not dest.exists()


def test_publish_to_a_repo_uploads_the_staged_folder(
    run_output: Path, hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["publish", str(run_output), "--repo", "acme/nap", "--dry-run"]) == 0
    assert hub.state.requests == []
    assert "would upload:" in capsys.readouterr().out
    assert main(["publish", str(run_output), "--repo", "acme/nap"]) == 0
    staged = run_output / "hf_dataset"
    local = {p.relative_to(staged).as_posix(): p.read_bytes() for p in iter_folder_files(staged)}
    assert hub.state.files("acme/nap") == local
    assert 'load_dataset("acme/nap", "sft")' in local["README.md"].decode()
    assert TOKEN not in capsys.readouterr().out


def test_settings_default_when_the_run_has_no_resolved_config(tmp_path: Path) -> None:
    settings = read_settings(tmp_path)
    assert settings.splits == {"train": 0.9, "validation": 0.05, "test": 0.05}
    assert (settings.license, settings.private, settings.scrub) == ("unknown", None, True)


def test_cli_visibility_flags_create_public_and_change_only_when_given(
    run_output: Path, hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "dataset/acme/nap"
    assert main(["publish", str(run_output), "--repo", "acme/nap", "--public"]) == 0
    assert hub.state.private[key] is False
    resolved = yaml.safe_load((run_output / "config.resolved.yaml").read_text())
    resolved["publish"] = {"private": True}
    (run_output / "config.resolved.yaml").write_text(yaml.safe_dump(resolved))
    capsys.readouterr()
    assert main(["publish", str(run_output), "--repo", "acme/nap"]) == 0
    assert hub.state.private[key] is False  # the config's wish only warns
    assert "warning: acme/nap is public" in capsys.readouterr().out
    assert main(["publish", str(run_output), "--repo", "acme/nap", "--private"]) == 0
    assert hub.state.private[key] is True
    assert "made it private as asked" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["publish", str(run_output), "--repo", "acme/nap", "--private", "--public"])


def test_publish_to_a_folder_names_that_folder_in_the_card(
    run_output: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "my-dataset"
    assert main(["publish", str(run_output), "--to", str(dest)]) == 0
    card = (dest / "README.md").read_text()
    # by the folder's name: a local path never reaches the card
    assert 'load_dataset("./my-dataset", "sft")' in card and "ORG/NAME" not in card
    assert str(tmp_path) not in card
    assert (dest / "report.json").is_file() and (dest / "statistics.json").is_file()


def test_bad_arguments_are_reported_as_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["publish", str(tmp_path / "missing"), "--to", str(tmp_path / "x")]) == 2
    assert "no such run output directory" in capsys.readouterr().err
