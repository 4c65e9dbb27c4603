"""The read routes of the Hub stand-in: repo info, tree, paths-info and file downloads.

A mixin of hub_server._Handler (which provides `_send`, `_send_bytes`, `_error`, `_admit`).
Downloads answer HEAD and GET with the headers huggingface_hub checks (ETag, X-Repo-Commit,
X-Linked-Etag/-Size for LFS files) and honour byte ranges.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from tests.publish.hub_state import HubState, etag, file_entry, is_lfs

RESOLVE_PATH = re.compile(
    r"^/(?:(?P<type>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"
)


class ReadRoutes:
    """`_info`, `_tree`, `_paths_info` and `_resolve`, called from the handler's do_* methods."""

    path: str
    headers: Any
    command: str

    def _info(self, state: HubState, key: str) -> None:
        files = state.repos[key]
        self._send(
            200,
            {
                "id": key.split("/", 1)[1],
                "sha": state.head(key),
                "private": state.private.get(key, False),
                "siblings": [{"rfilename": p} for p in sorted(files)],
                "cardData": {},
                "tags": [],
            },
        )

    def _tree(self, state: HubState, key: str, rest: str) -> None:
        prefix = (rest.split("/", 1)[1] if "/" in rest else "").rstrip("/")
        recursive = "recursive=true" in (urlparse(self.path).query or "").lower()
        entries: dict[str, dict[str, Any]] = {}
        for path, data in sorted(state.repos[key].items()):
            if prefix and not path.startswith(prefix + "/"):
                continue
            parts = (path[len(prefix) + 1 :] if prefix else path).split("/")
            base = prefix + "/" if prefix else ""
            for depth in range(1, len(parts)):
                folder = base + "/".join(parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(
                        folder, {"type": "directory", "oid": "0" * 40, "path": folder}
                    )
            if recursive or len(parts) == 1:
                entries[path] = file_entry(path, data)
        if prefix and not entries:
            self._error(404, f"{prefix} does not exist", "EntryNotFound")
            return
        self._send(200, list(entries.values()))

    def _paths_info(self, state: HubState, key: str, body: bytes) -> None:
        form = parse_qs(body.decode())
        if self.headers.get("Content-Type", "").startswith("application/json"):
            form = {"paths": json.loads(body).get("paths", [])}
        files = state.repos[key]
        out = []
        for path in form.get("paths", []):
            if path in files:
                out.append(file_entry(path, files[path]))
            elif any(p.startswith(path.rstrip("/") + "/") for p in files):
                out.append({"type": "directory", "oid": "0" * 40, "path": path})
        self._send(200, out)

    def _resolve(self, *, head: bool, state: HubState | None = None) -> None:
        state = state or self._admit()
        if state is None:
            return
        match = RESOLVE_PATH.match(urlparse(self.path).path)
        if match is None:
            self._error(404, "no route")
            return
        key = f"{(match['type'] or 'models')[:-1]}/{unquote(match['repo'])}"
        path = unquote(match["path"])
        files = state.repos.get(key)
        if files is None:
            self._error(404, "Repository not found", "RepoNotFound")
            return
        if path not in files:
            self._error(404, "Entry not found", "EntryNotFound")
            return
        data = files[path]
        headers = {
            "ETag": f'"{etag(path, data)}"',
            "X-Repo-Commit": state.head(key),
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if is_lfs(path):
            headers["X-Linked-Etag"] = headers["ETag"]
            headers["X-Linked-Size"] = str(len(data))
        status, chunk = 200, data
        ranged = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        if ranged:
            start = int(ranged[1]) if ranged[1] else max(len(data) - int(ranged[2]), 0)
            end = int(ranged[2]) if ranged[1] and ranged[2] else len(data) - 1
            end = min(end, len(data) - 1)
            status, chunk = 206, data[start : end + 1]
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        if head:
            headers["Content-Length"] = str(len(chunk))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            return
        self._send_bytes(status, chunk, headers)
