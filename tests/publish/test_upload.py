"""Upload to a local stand-in for the Hub: files arrive intact, interrupted uploads resume."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from builder.errors import PublishError
from builder.publish.layout import build_dataset_folder, iter_folder_files
from builder.publish.upload import commit_groups, plan_upload, upload
from tests.publish.hub_server import HubServer, refusing_endpoint
from tests.publish.publish_fixtures import TOKEN

REPO = "acme/nap-compress"


@pytest.fixture
def dataset(run_output: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, max_rows_per_shard=30, batch_size=10, repo_id=REPO)
    return dest


def _local_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in iter_folder_files(folder)}


def test_upload_sends_every_file_intact_with_the_token(hub: HubServer, dataset: Path) -> None:
    report = upload(dataset, REPO, private=True, endpoint=hub.endpoint)
    local = _local_files(dataset)
    assert hub.state.files(REPO) == local
    assert sorted(report.uploaded) == sorted(local)
    assert report.skipped == []
    assert report.commits == len(list(commit_groups(plan_upload(dataset))))
    assert hub.state.private[f"dataset/{REPO}"] is True
    assert set(hub.state.authorizations) == {f"Bearer {TOKEN}"}
    assert hub.state.commits[-1].paths == ["README.md"]  # the card comes last


def test_one_commit_per_config_split_then_plots_then_card(dataset: Path) -> None:
    groups = [name for name, _ in commit_groups(plan_upload(dataset))]
    assert groups[-2:] == ["plots", "README.md"]
    assert groups[:3] == [
        "data/candidates/test",
        "data/candidates/train",
        "data/candidates/validation",
    ]
    assert len(groups) == 3 * 3 + 2


def test_interrupted_upload_resumes_with_only_the_missing_files(
    hub: HubServer, dataset: Path
) -> None:
    groups = list(commit_groups(plan_upload(dataset)))
    hub.state.fail_commits = {2}  # the second commit dies once, like a dropped connection
    with pytest.raises(PublishError, match="run the same publish command again"):
        upload(dataset, REPO, retries=0)
    first = sorted(f.path_in_repo for f in groups[0][1])
    assert sorted(hub.state.files(REPO)) == first

    resumed = upload(dataset, REPO, retries=0)
    assert sorted(resumed.skipped) == first
    assert sorted(resumed.uploaded) == sorted(set(_local_files(dataset)) - set(first))
    assert hub.state.files(REPO) == _local_files(dataset)
    sent_twice = [p for c in hub.state.commits for p in c.paths]
    assert len(sent_twice) == len(set(sent_twice))  # nothing was uploaded twice

    again = upload(dataset, REPO)
    assert again.uploaded == [] and again.commits == 0


def test_a_changed_file_is_uploaded_again(hub: HubServer, dataset: Path) -> None:
    upload(dataset, REPO)
    readme = dataset / "README.md"
    readme.write_text(readme.read_text() + "\nMore notes.\n")
    report = upload(dataset, REPO)
    assert report.uploaded == ["README.md"]
    assert hub.state.files(REPO)["README.md"] == readme.read_bytes()


def test_a_transient_commit_error_is_retried(hub: HubServer, dataset: Path) -> None:
    hub.state.fail_commits = {1}
    report = upload(dataset, REPO, retries=1)
    assert hub.state.files(REPO) == _local_files(dataset)
    assert hub.state.commit_calls == report.commits + 1


def test_dry_run_lists_files_without_any_request(
    hub: HubServer, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    report = upload(dataset, REPO, dry_run=True)
    assert hub.state.requests == []
    local = _local_files(dataset)
    assert {f.path_in_repo: f.size for f in report.planned} == {k: len(v) for k, v in local.items()}
    lines = report.lines()
    assert lines[-1].startswith(f"would upload: {len(local)} files")
    assert any(line.endswith("README.md") for line in lines)


def test_missing_token_is_a_clear_error(
    hub: HubServer, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(PublishError, match="HF_TOKEN"):
        upload(dataset, REPO)
    assert hub.state.requests == []


def test_token_reaches_no_log_record_and_no_file(
    hub: HubServer, dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    hub.state.fail_commits = {3}
    with pytest.raises(PublishError) as failure:
        upload(dataset, REPO, retries=0)
    assert TOKEN not in str(failure.value)
    upload(dataset, REPO)
    assert caplog.records, "expected log records to check"
    for record in caplog.records:
        assert TOKEN not in record.getMessage()
    assert TOKEN not in caplog.text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    for content in hub.state.files(REPO).values():
        assert TOKEN.encode() not in content


def test_what_arrived_loads_with_datasets(
    hub: HubServer, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    upload(dataset, REPO)
    mirror = tmp_path / "mirror"
    for path, content in hub.state.files(REPO).items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_bytes(content)
    sft = load_dataset(str(mirror), "sft", cache_dir=str(tmp_path / "cache"))
    expected = load_dataset(str(dataset), "sft", cache_dir=str(tmp_path / "cache2"))
    assert {s: d.num_rows for s, d in sft.items()} == {s: d.num_rows for s, d in expected.items()}
    assert sft["train"][0] == expected["train"][0]


def test_an_unreachable_endpoint_is_a_publish_error(dataset: Path, hub: HubServer) -> None:
    with pytest.raises(PublishError, match="cannot create or list the repo"):
        upload(dataset, REPO, endpoint=refusing_endpoint(), token=TOKEN)
