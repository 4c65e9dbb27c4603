"""What the Hub stand-in knows (repos, files, commits, requests) and how it describes files.

Files matching LFS_SUFFIXES are reported as LFS entries, as the real Hub does for the patterns
of its default .gitattributes: their tree entry has an `lfs` block (sha256 and size of the
content) and a git `oid` of the pointer file, so clients must compare by sha256.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

LFS_SUFFIXES = (".parquet", ".png")


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob, as the Hub reports it for non-LFS files."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    """The git-lfs pointer file stored in git in place of an LFS file's content."""
    sha = hashlib.sha256(data).hexdigest()
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(data)}\n".encode()
    )


def is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def file_entry(path: str, data: bytes) -> dict[str, Any]:
    """A file as `GET .../tree` and `paths-info` describe it."""
    if not is_lfs(path):
        return {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": path}
    pointer = lfs_pointer(data)
    lfs = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": len(pointer)}
    return {
        "type": "file",
        "oid": git_blob_sha1(pointer),
        "size": len(data),
        "path": path,
        "lfs": lfs,
    }


def etag(path: str, data: bytes) -> str:
    """The ETag a file download answers: sha256 for LFS files, the git blob id otherwise."""
    return hashlib.sha256(data).hexdigest() if is_lfs(path) else git_blob_sha1(data)


@dataclass
class Commit:
    repo: str
    oid: str
    summary: str
    paths: list[str]
    deleted: list[str] = field(default_factory=list)


@dataclass
class HubState:
    """Everything the stand-in knows; tests read it to check what arrived."""

    token: str | None = None  # the only accepted bearer token; None accepts any request
    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)  # "type/org/name" -> files
    private: dict[str, bool] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # answered 401
    fail_commits: set[int] = field(default_factory=set)
    commit_calls: int = 0
    preupload_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        return self.repos.get(f"{repo_type}/{repo_id}", {})

    def head(self, key: str) -> str:
        """The repo's current commit id (40 zeros before the first commit)."""
        return next((c.oid for c in reversed(self.commits) if c.repo == key), "0" * 40)

    def commits_to(self, repo_id: str, repo_type: str = "dataset") -> list[Commit]:
        return [c for c in self.commits if c.repo == f"{repo_type}/{repo_id}"]
