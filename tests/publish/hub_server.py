"""A local stand-in for the Hugging Face Hub HTTP API, on 127.0.0.1 only.

It implements what `huggingface_hub.HfApi` calls to create a repo, list its tree and commit
files: `POST /api/repos/create`, `POST /api/validate-yaml`, `POST .../preupload/<rev>` (always
answering uploadMode "regular", so contents arrive base64-encoded inside the commit), `POST
.../commit/<rev>` (NDJSON), `GET .../tree/<rev>[/<path>]`, `GET .../revision/<rev>`,
`GET /api/whoami-v2` and `GET /api/agent-harnesses`. Files are kept in memory.
`fail_commits` makes chosen commit calls (1-based, counted over the server's life) answer 500
once, to simulate an interrupted upload.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

REPO_PATH = re.compile(
    r"^/api/(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)/"
    r"(?P<op>preupload|commit|tree|revision)/(?P<rest>.*)$"
)


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob, as the Hub reports it for non-LFS files."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    repo: str
    oid: str
    summary: str
    paths: list[str]


@dataclass
class HubState:
    """Everything the stand-in knows; tests read it to check what arrived."""

    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)  # "type/org/name" -> files
    private: dict[str, bool] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    fail_commits: set[int] = field(default_factory=set)
    commit_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        return self.repos.get(f"{repo_type}/{repo_id}", {})


class _Handler(BaseHTTPRequestHandler):
    server: _HubHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log (it would also print the request line)."""

    # -- plumbing ---------------------------------------------------------------------------
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        self._send(status, {"error": message}, {"X-Error-Code": code} if code else None)

    def _record(self) -> HubState:
        state = self.server.state
        with state.lock:
            state.authorizations.append(self.headers.get("Authorization"))
            state.requests.append((self.command, urlparse(self.path).path))
        return state

    # -- routes -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        state = self._record()
        path = urlparse(self.path).path
        if path == "/api/whoami-v2":
            self._send(200, {"type": "user", "name": "tester", "orgs": [], "auth": {}})
            return
        if path == "/api/agent-harnesses":  # huggingface_hub's user-agent registry
            self._send(200, {"standardEnvVars": [], "harnesses": {}})
            return
        match = REPO_PATH.match(path)
        if not match:
            self._error(404, f"no route {path}")
            return
        key = f"{match['type'][:-1]}/{unquote(match['repo'])}"
        if key not in state.repos:
            self._error(404, "Repository not found", "RepoNotFound")
            return
        if match["op"] == "tree":
            self._tree(state, key, unquote(match["rest"]))
        elif match["op"] == "revision":
            sha = next((c.oid for c in reversed(state.commits) if c.repo == key), "0" * 40)
            siblings = [{"rfilename": p} for p in sorted(state.repos[key])]
            self._send(200, {"id": key.split("/", 1)[1], "sha": sha, "siblings": siblings})
        else:
            self._error(405, "method not allowed")

    def _tree(self, state: HubState, key: str, rest: str) -> None:
        prefix = rest.split("/", 1)[1] if "/" in rest else ""
        recursive = "recursive=true" in (urlparse(self.path).query or "").lower()
        files = state.repos[key]
        entries: dict[str, dict[str, Any]] = {}
        for path, data in sorted(files.items()):
            if prefix and not path.startswith(prefix.rstrip("/") + "/"):
                continue
            relative = path[len(prefix.rstrip("/")) + 1 :] if prefix else path
            parts = relative.split("/")
            base = prefix.rstrip("/") + "/" if prefix else ""
            for depth in range(1, len(parts)):
                folder = base + "/".join(parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(
                        folder, {"type": "directory", "oid": "0" * 40, "path": folder}
                    )
            if recursive or len(parts) == 1:
                entries[path] = {
                    "type": "file",
                    "oid": git_blob_sha1(data),
                    "size": len(data),
                    "path": path,
                }
        self._send(200, list(entries.values()))

    def do_POST(self) -> None:
        state = self._record()
        path = urlparse(self.path).path
        body = self._body()
        if path == "/api/repos/create":
            self._create(state, json.loads(body))
        elif path == "/api/validate-yaml":
            self._send(200, {"errors": [], "warnings": []})
        elif match := REPO_PATH.match(path):
            key = f"{match['type'][:-1]}/{unquote(match['repo'])}"
            if key not in state.repos:
                self._error(404, "Repository not found", "RepoNotFound")
            elif match["op"] == "preupload":
                self._preupload(state, key, json.loads(body))
            elif match["op"] == "commit":
                self._commit(state, key, body)
            else:
                self._error(405, "method not allowed")
        else:
            self._error(404, f"no route {path}")

    def _create(self, state: HubState, payload: dict[str, Any]) -> None:
        repo_id = f"{payload['organization'] or 'tester'}/{payload['name']}"
        key = f"{payload.get('type') or 'model'}/{repo_id}"
        with state.lock:
            if key in state.repos:  # the real Hub also answers the url with its 409
                url = f"http://{self.headers['Host']}/datasets/{repo_id}"
                self._send(409, {"error": "You already created this repo", "url": url})
                return
            state.repos[key] = {}
            state.private[key] = payload.get("private", payload.get("visibility") == "private")
        self._send(
            200, {"url": f"http://{self.headers['Host']}/datasets/{repo_id}", "name": repo_id}
        )

    def _preupload(self, state: HubState, key: str, payload: dict[str, Any]) -> None:
        files = state.repos[key]
        answer = [
            {
                "path": f["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": git_blob_sha1(files[f["path"]]) if f["path"] in files else None,
            }
            for f in payload["files"]
        ]
        self._send(200, {"files": answer, "commitOid": "0" * 40})

    def _commit(self, state: HubState, key: str, body: bytes) -> None:
        with state.lock:
            state.commit_calls += 1
            failing = state.commit_calls in state.fail_commits
        if failing:
            self._error(500, "Internal Error - simulated interruption")
            return
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next(x["value"] for x in lines if x["key"] == "header")
        added: dict[str, bytes] = {}
        for item in lines:
            if item["key"] == "file":
                value = item["value"]
                if value.get("encoding") != "base64":
                    self._error(400, "only base64 inline files are supported")
                    return
                added[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] != "header":
                self._error(400, f"unsupported commit operation {item['key']}")
                return
        with state.lock:
            state.repos[key].update(added)
            oid = hashlib.sha1(f"{len(state.commits)}:{sorted(added)}".encode()).hexdigest()
            state.commits.append(Commit(key, oid, header["summary"], sorted(added)))
        repo = key.split("/", 1)[1]
        host = self.headers["Host"]
        self._send(
            200,
            {
                "commitUrl": f"http://{host}/datasets/{repo}/commit/{oid}",
                "commitOid": oid,
                "success": True,
            },
        )


class _HubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: HubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


def refusing_endpoint() -> str:
    """A 127.0.0.1 URL on a port nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class HubServer:
    """Context manager running the stand-in on a free port; `.endpoint` is its base URL."""

    def __init__(self) -> None:
        self.state = HubState()
        self._server = _HubHTTPServer(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
