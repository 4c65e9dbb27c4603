"""Push a dataset folder to the Hugging Face Hub so the repo ends up equal to the folder.

One publish is one commit: it adds every file that is new or changed, deletes every file the
folder no longer has under the paths a publish owns (data/, plots/, README.md, report.json;
other repo files such as .gitattributes are left alone), and carries the README in the same
commit. The Hub copy is therefore never a mix of two publishes (e.g. shards of two different
shard counts, which `load_dataset` rejects). Large files are pre-uploaded in groups first
(huggingface_hub's `preupload_lfs_files`): content that reached the Hub is not sent again when
an interrupted publish is run again, and the commit itself is atomic.

Before committing, the remote tree is listed: a file already there with the same size and
hash (sha256 for LFS files, git blob id otherwise) is skipped, so a finished publish re-run
sends nothing. The token comes from the argument or huggingface_hub's own lookup (HF_TOKEN,
then the token stored by `hf auth login`); it is never logged or written anywhere.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from builder.errors import PublishError
from builder.publish.folder import is_managed, iter_folder_files
from builder.publish.visibility import REPO_TYPE, Visibility, ensure_repo

log = logging.getLogger(__name__)

MAX_FILES_PER_PREUPLOAD = 100


@dataclass(frozen=True, slots=True)
class LocalFile:
    path_in_repo: str
    local_path: Path
    size: int


@dataclass(slots=True)
class UploadReport:
    """What an upload did (or, with `dry_run`, would do)."""

    repo_id: str
    dry_run: bool
    planned: list[LocalFile]
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    commits: int = 0
    url: str | None = None
    visibility: Visibility | None = None

    @property
    def planned_bytes(self) -> int:
        return sum(f.size for f in self.planned)

    def lines(self) -> list[str]:
        """Human-readable listing (the dry-run output)."""
        head = "would upload" if self.dry_run else "uploaded"
        done = set(self.uploaded)
        rows = [
            f"{f.size:>12,d}  {f.path_in_repo}"
            for f in self.planned
            if self.dry_run or f.path_in_repo in done
        ]
        rows += [f"{'deleted':>12}  {p}" for p in self.deleted]
        tail = f"{len(self.planned)} files, {self.planned_bytes:,d} bytes -> {self.repo_id}"
        if not self.dry_run:
            tail += (
                f" ({len(self.uploaded)} uploaded, {len(self.skipped)} already there,"
                f" {len(self.deleted)} stale deleted, {self.commits} commit"
                f"{'' if self.commits == 1 else 's'})"
            )
        if self.visibility is not None:
            tail += f", {'private' if self.visibility.private else 'public'}"
        return [*rows, f"{head}: {tail}"]


def plan_upload(folder: Path) -> list[LocalFile]:
    """The files of a dataset folder in commit order: data, then the rest, README.md last."""
    if not (folder / "README.md").is_file():
        raise PublishError(f"{folder}: no README.md; build the dataset folder first")
    files = [
        LocalFile(p.relative_to(folder).as_posix(), p, p.stat().st_size)
        for p in iter_folder_files(folder)
    ]
    return sorted(files, key=lambda f: (_order(f.path_in_repo), f.path_in_repo))


def _order(path: str) -> int:
    if path.startswith("data/"):
        return 0
    return 2 if path == "README.md" else 1


def resolve_token(token: str | None) -> str | None:
    """The given token, else huggingface_hub's lookup (HF_TOKEN, then the stored login)."""
    if token:
        return token
    from huggingface_hub import get_token

    return get_token()


def upload(
    folder: Path,
    repo_id: str,
    *,
    private: bool | None = None,
    change_visibility: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    dry_run: bool = False,
    retries: int = 2,
) -> UploadReport:
    """Create the repo if needed, then make it equal to `folder` in one commit."""
    report = UploadReport(repo_id=repo_id, dry_run=dry_run, planned=plan_upload(folder))
    if dry_run:
        return report
    if resolve_token(token) is None:
        raise PublishError(
            "no Hugging Face token: set HF_TOKEN (a write token) or log in with `hf auth login`"
        )
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    # token=None lets huggingface_hub find it itself; the value never passes through here
    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token or None)
    try:
        report.visibility = ensure_repo(api, repo_id, private, change_visibility)
        report.url = f"{api.endpoint}/datasets/{repo_id}"
        remote = _remote_files(api, repo_id)
    except Exception as err:  # HTTP status or network failure: say which, keep the cause
        raise PublishError(f"{repo_id}: cannot create or list the repo: {_status(err)}") from err
    local = {f.path_in_repo for f in report.planned}
    todo = [f for f in report.planned if not _same(f, remote.get(f.path_in_repo))]
    report.skipped = [f.path_in_repo for f in report.planned if f not in todo]
    report.deleted = sorted(p for p in remote if is_managed(p) and p not in local)
    if not todo and not report.deleted:
        return report
    additions = [CommitOperationAdd(f.path_in_repo, str(f.local_path)) for f in todo]
    for start in range(0, len(additions), MAX_FILES_PER_PREUPLOAD):
        group = additions[start : start + MAX_FILES_PER_PREUPLOAD]
        _retried(
            partial(api.preupload_lfs_files, repo_id, additions=group, repo_type=REPO_TYPE),
            repo_id, f"pre-upload of {len(group)} files", retries,
        )  # fmt: skip
    deletions = [CommitOperationDelete(path) for path in report.deleted]
    message = f"Publish {len(todo)} files" + (
        f", delete {len(deletions)} stale files" if deletions else ""
    )
    ops: list[Any] = [*additions, *deletions]
    _retried(
        lambda: api.create_commit(repo_id, ops, commit_message=message, repo_type=REPO_TYPE),
        repo_id, f"commit {message!r}", retries,
    )  # fmt: skip
    report.uploaded = [f.path_in_repo for f in todo]
    report.commits = 1
    log.info("%s to %s", message, repo_id)
    return report


def _retried(call: Callable[[], object], repo_id: str, what: str, retries: int) -> None:
    """One request, retried on transient failures; a final failure says how to resume."""
    for attempt in range(retries + 1):
        try:
            call()
            return
        except Exception as err:
            if attempt == retries or not _transient(err):
                raise PublishError(
                    f"{repo_id}: {what} failed ({_status(err)}); the Hub copy is unchanged, "
                    "run the same publish command again to resume"
                ) from err
            log.warning("%s failed (%s), retrying", what, _status(err))
            time.sleep(min(2.0**attempt, 10.0))


def _status(err: Exception) -> str:
    code = _status_code(err)
    return f"HTTP {code}" if code is not None else type(err).__name__


def _status_code(err: Exception) -> int | None:
    code = getattr(getattr(err, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def _transient(err: Exception) -> bool:
    """Worth retrying: 429, 5xx, or a network error (no HTTP answer at all)."""
    code = _status_code(err)
    if code is not None:
        return code == 429 or code >= 500
    network = type(err).__module__.split(".")[0] in {"httpx", "httpx2", "httpcore", "httpcore2"}
    return network or isinstance(err, OSError)


def _remote_files(api: object, repo_id: str) -> dict[str, object]:
    """Path -> RepoFile for every file already in the repo (empty for a new repo)."""
    from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

    try:
        entries = api.list_repo_tree(repo_id, repo_type=REPO_TYPE, recursive=True)  # type: ignore[attr-defined]
        return {e.path: e for e in entries if hasattr(e, "size")}
    except (EntryNotFoundError, RevisionNotFoundError):
        return {}


def _same(local: LocalFile, remote: object | None) -> bool:
    """Same size and same content hash (sha256 for LFS files, git blob id otherwise)."""
    if remote is None or getattr(remote, "size", None) != local.size:
        return False
    lfs = getattr(remote, "lfs", None)
    if lfs is not None:
        return _file_sha256(local.local_path) == lfs.sha256
    return _git_blob_sha1(local.local_path, local.size) == getattr(remote, "blob_id", None)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _git_blob_sha1(path: Path, size: int) -> str:
    digest = hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
