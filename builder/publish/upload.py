"""Push a dataset folder to the Hugging Face Hub, resumably.

Files are committed in groups (one commit per config-split, then plots, then README.md), and
before committing, the remote tree is listed: a file already there with the same size and hash
is skipped. An upload cut short (Ctrl-C, network, server error) therefore resumes where it
stopped when run again, and a finished upload re-run sends nothing.

The token comes from the argument or `HF_TOKEN` and is only handed to `HfApi`; it is never
logged or written anywhere.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from builder.errors import PublishError
from builder.publish.layout import iter_folder_files

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
MAX_FILES_PER_COMMIT = 100


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
    commits: int = 0
    url: str | None = None

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
        tail = f"{len(self.planned)} files, {self.planned_bytes:,d} bytes -> {self.repo_id}"
        if not self.dry_run:
            tail += (
                f" ({len(self.uploaded)} uploaded, {len(self.skipped)} already there,"
                f" {self.commits} commits)"
            )
        return [*rows, f"{head}: {tail}"]


def plan_upload(folder: Path) -> list[LocalFile]:
    """The files of a dataset folder in upload order: data, then plots, README.md last."""
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


def commit_groups(files: Iterable[LocalFile]) -> Iterator[tuple[str, list[LocalFile]]]:
    """Consecutive groups sharing a folder and split prefix, at most MAX_FILES_PER_COMMIT each."""
    group: list[LocalFile] = []
    key = ""
    for f in files:
        folder, _, name = f.path_in_repo.rpartition("/")
        this = f"{folder}/{name.split('-')[0]}" if folder.startswith("data/") else folder or name
        if group and (this != key or len(group) >= MAX_FILES_PER_COMMIT):
            yield key, group
            group = []
        key = this
        group.append(f)
    if group:
        yield key, group


def upload(
    folder: Path,
    repo_id: str,
    *,
    private: bool = True,
    token: str | None = None,
    endpoint: str | None = None,
    dry_run: bool = False,
    retries: int = 2,
) -> UploadReport:
    """Create the dataset repo if needed and commit every file not already there."""
    report = UploadReport(repo_id=repo_id, dry_run=dry_run, planned=plan_upload(folder))
    if dry_run:
        return report
    token = token or os.environ.get("HF_TOKEN")
    if not token:
        raise PublishError("no Hugging Face token: set HF_TOKEN (a write token) in the environment")
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    try:
        report.url = str(
            api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        )
        remote = _remote_files(api, repo_id)
    except Exception as err:  # HTTP status or network failure: say which, keep the cause
        raise PublishError(f"{repo_id}: cannot create or list the repo: {_status(err)}") from err
    todo = [f for f in report.planned if not _same(f, remote.get(f.path_in_repo))]
    report.skipped = [f.path_in_repo for f in report.planned if f not in todo]
    for name, group in commit_groups(todo):
        ops = [CommitOperationAdd(f.path_in_repo, str(f.local_path)) for f in group]
        _commit(api, repo_id, ops, f"Upload {name} ({len(group)} files)", retries)
        report.uploaded += [f.path_in_repo for f in group]
        report.commits += 1
        log.info("committed %s (%d files) to %s", name, len(group), repo_id)
    return report


def _commit(api: object, repo_id: str, ops: list, message: str, retries: int) -> None:
    """One commit, retried on transient failures; a final failure says how to resume."""
    for attempt in range(retries + 1):
        try:
            api.create_commit(repo_id, ops, commit_message=message, repo_type=REPO_TYPE)  # type: ignore[attr-defined]
            return
        except Exception as err:
            if attempt == retries or not _transient(err):
                raise PublishError(
                    f"{repo_id}: commit {message!r} failed ({_status(err)}); "
                    "run the same publish command again to resume"
                ) from err
            log.warning("commit %r failed (%s), retrying", message, _status(err))
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
