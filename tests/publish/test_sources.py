"""The card's inputs: licences from the config, LICENSE files, dataset READMEs, the Hub cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.publish.sources import InputSource, input_sources

MIT_TEXT = "MIT License\n\nCopyright (c) 2025 Someone\n\nPermission is hereby granted..."


def _resolved(*paths: str) -> dict:
    return {"inputs": [{"path": p, "format": "auto", "options": {}} for p in paths]}


def test_licences_are_named_detected_or_reported_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as constants

    licensed = tmp_path / "runs" / "licensed"
    licensed.mkdir(parents=True)
    (licensed / "LICENSE").write_text(MIT_TEXT)
    (licensed / "a.traj.json").write_text("{}")
    hf_folder = tmp_path / "hf-folder"
    hf_folder.mkdir()
    (hf_folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# data\n")
    bare = tmp_path / "bare"
    bare.mkdir()
    cache = tmp_path / "hub-cache"
    snapshot = cache / "datasets--acme--trajs" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n")
    (cache / "datasets--acme--trajs" / "refs").mkdir()
    (cache / "datasets--acme--trajs" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    resolved = _resolved(
        str(licensed / "a.traj.json"), str(hf_folder), str(bare), "acme/trajs", "acme/other",
        str(tmp_path / "named" / "runs"),
    )  # fmt: skip
    resolved["publish"] = {"input_licenses": {"./named/runs/": "bsd-3-clause"}}
    assert input_sources(resolved) == [
        InputSource(str(licensed / "a.traj.json"), "mit", "LICENSE"),
        InputSource(str(hf_folder), "apache-2.0", "README.md"),
        InputSource(str(bare), None, "unknown"),
        InputSource("acme/trajs", "cc-by-4.0", "the Hub dataset's README (cached)"),
        InputSource("acme/other", None, "unknown"),
        InputSource(str(tmp_path / "named" / "runs"), "bsd-3-clause", "publish.input_licenses"),
    ]
    # a licence given to the publish command wins over the config's and over detection
    named = input_sources(resolved, {str(hf_folder): "odc-by", "./named/runs/": "mit"})
    assert named[1] == InputSource(str(hf_folder), "odc-by", "publish.input_licenses")
    assert named[-1].license == "mit"
    assert input_sources({}) == []
