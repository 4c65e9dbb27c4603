"""Upload to a local stand-in for the Hub: one commit per publish, Hub copy equal to the folder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from builder.errors import PublishError
from builder.publish.layout import build_dataset_folder, iter_folder_files
from builder.publish.upload import plan_upload, upload
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


def test_one_commit_sends_every_file_intact_with_the_token(hub: HubServer, dataset: Path) -> None:
    report = upload(dataset, REPO, endpoint=hub.endpoint)
    local = _local_files(dataset)
    assert hub.state.files(REPO) == local
    assert sorted(report.uploaded) == sorted(local) and report.skipped == []
    [commit] = hub.state.commits_to(REPO)
    assert commit.paths == sorted(local) and "README.md" in commit.paths  # card in the same commit
    assert report.commits == 1
    assert hub.state.private[f"dataset/{REPO}"] is True  # a new repo without a wish: private
    assert set(hub.state.authorizations) - {None} == {f"Bearer {TOKEN}"}
    assert hub.state.rejected == []


def test_republishing_another_shard_count_leaves_no_stale_file_and_loads(
    hub: HubServer, run_output: Path, tmp_path: Path
) -> None:
    from datasets import load_dataset

    dest = tmp_path / "ds"
    build_dataset_folder(run_output, dest, max_rows_per_shard=30, batch_size=10, repo_id=REPO)
    upload(dest, REPO)
    before = set(hub.state.files(REPO))
    assert len([p for p in before if p.startswith("data/sft/train-")]) > 1

    build_dataset_folder(run_output, dest, repo_id=REPO)  # one shard per split now
    report = upload(dest, REPO)
    local = _local_files(dest)
    assert hub.state.files(REPO) == local  # nothing stale beside the new shards
    assert sorted(report.deleted) == sorted(before - set(local))
    assert all(p.startswith("data/") and "-of-0000" in p for p in report.deleted)
    # unchanged plots (SVG: regular git files) were recognised by blob id and not sent again
    assert {p for p in report.skipped if p.startswith("plots/")} == {
        p for p in local if p.startswith("plots/")
    }
    last = hub.state.commits_to(REPO)[-1]
    assert last.deleted == sorted(report.deleted) and "README.md" in last.paths
    assert report.commits == 1

    loaded = load_dataset(REPO, "sft", cache_dir=str(tmp_path / "cache"))
    read = {p for m, p in hub.state.requests if m == "GET" and "/resolve/" in p}
    fetched = {p.split("/resolve/", 1)[1].split("/", 1)[1] for p in read}  # drop the revision
    assert {p for p in fetched if p.endswith(".parquet")} == {
        p for p in local if p.startswith("data/sft/")
    }  # the data came through the stand-in, only the current shards
    expected = load_dataset(str(dest), "sft", cache_dir=str(tmp_path / "cache-local"))
    assert {s: d.num_rows for s, d in loaded.items()} == {
        s: d.num_rows for s, d in expected.items()
    }
    assert loaded["train"].to_list() == expected["train"].to_list()


def test_an_lfs_file_with_the_same_size_but_new_content_is_sent(
    hub: HubServer, dataset: Path
) -> None:
    upload(dataset, REPO)
    shard = sorted((dataset / "data").rglob("*.parquet"))[0]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different bytes: only the sha256 tells
    shard.write_bytes(bytes(data))
    report = upload(dataset, REPO)
    assert report.uploaded == [shard.relative_to(dataset).as_posix()]
    assert hub.state.files(REPO)[report.uploaded[0]] == bytes(data)


def test_an_interrupted_publish_leaves_the_hub_copy_unchanged_then_resumes(
    hub: HubServer, run_output: Path, dataset: Path
) -> None:
    upload(dataset, REPO)
    old = dict(hub.state.files(REPO))
    build_dataset_folder(run_output, dataset, repo_id=REPO)
    hub.state.fail_commits = {hub.state.commit_calls + 1}  # the next commit dies once
    with pytest.raises(PublishError, match="Hub copy is unchanged, run the same publish"):
        upload(dataset, REPO, retries=0)
    assert hub.state.files(REPO) == old  # never a mix of two publishes
    resumed = upload(dataset, REPO, retries=0)
    assert hub.state.files(REPO) == _local_files(dataset)
    assert resumed.commits == 1
    again = upload(dataset, REPO)
    assert again.uploaded == [] and again.deleted == [] and again.commits == 0


def test_a_changed_file_is_uploaded_again(hub: HubServer, dataset: Path) -> None:
    upload(dataset, REPO)
    readme = dataset / "README.md"
    readme.write_text(readme.read_text() + "\nMore notes.\n")
    report = upload(dataset, REPO)
    assert report.uploaded == ["README.md"]
    assert hub.state.files(REPO)["README.md"] == readme.read_bytes()


def test_files_a_publish_does_not_own_are_left_alone(hub: HubServer, dataset: Path) -> None:
    upload(dataset, REPO)
    hub.state.repos[f"dataset/{REPO}"][".gitattributes"] = b"*.parquet filter=lfs\n"
    report = upload(dataset, REPO)
    assert report.deleted == [] and ".gitattributes" in hub.state.files(REPO)


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
    assert [f.path_in_repo for f in plan_upload(dataset)][-1] == "README.md"


def test_missing_token_is_a_clear_error(
    hub: HubServer, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(PublishError, match=r"HF_TOKEN.*hf auth login"):
        upload(dataset, REPO)
    assert hub.state.requests == []


def test_the_token_stored_by_hf_auth_login_is_used(
    hub: HubServer, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as constants

    monkeypatch.delenv("HF_TOKEN")
    stored = Path(constants.HF_TOKEN_PATH)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(TOKEN)  # what `hf auth login` writes
    upload(dataset, REPO)
    assert hub.state.files(REPO) == _local_files(dataset)
    assert hub.state.rejected == []
    assert set(hub.state.authorizations) - {None} == {f"Bearer {TOKEN}"}


def test_a_wrong_token_is_refused_by_the_stand_in(
    hub: HubServer, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_" + "wrong" * 6)
    with pytest.raises(PublishError, match="HTTP 401"):
        upload(dataset, REPO)
    assert hub.state.rejected and hub.state.files(REPO) == {}


def test_visibility_is_explicit_and_changed_only_when_asked(
    hub: HubServer, dataset: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = f"dataset/{REPO}"
    first = upload(dataset, REPO, private=False)
    assert hub.state.private[key] is False and first.visibility is not None
    assert first.visibility.created
    caplog.set_level(logging.WARNING)
    wish = upload(dataset, REPO, private=True)  # from the config: warn, keep public
    assert hub.state.private[key] is False
    assert wish.visibility is not None and not wish.visibility.changed
    assert "pass --private to change it" in (wish.visibility.warning or "")
    assert "pass --private" in caplog.text
    asked = upload(dataset, REPO, private=True, change_visibility=True)  # --private
    assert hub.state.private[key] is True
    assert asked.visibility is not None and asked.visibility.changed
    same = upload(dataset, REPO, private=None)
    assert same.visibility is not None and same.visibility.private and not same.visibility.warning
    upload(dataset, REPO, private=False, change_visibility=True)  # --public
    assert hub.state.private[key] is False


def test_token_reaches_no_log_record_and_no_file(
    hub: HubServer, dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    hub.state.fail_commits = {1}
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


def test_an_unreachable_endpoint_is_a_publish_error(dataset: Path, hub: HubServer) -> None:
    with pytest.raises(PublishError, match="cannot create or list the repo"):
        upload(dataset, REPO, endpoint=refusing_endpoint(), token=TOKEN)
