"""A local stand-in for the Hugging Face Hub HTTP API, on 127.0.0.1 only.

It implements what `huggingface_hub.HfApi` calls to create a repo, read and change its
settings, list its tree and commit files (`POST /api/repos/create`, `GET /api/datasets/<repo>`,
`PUT .../settings`, `POST .../preupload/<rev>` answering uploadMode "regular" so contents
arrive base64-encoded inside the commit, `POST .../commit/<rev>` with added and deleted files,
`GET .../tree/<rev>[/<path>]`), and what `datasets.load_dataset` reads through it
(`GET .../revision/<rev>`, `POST .../paths-info/<rev>`, `GET|HEAD /datasets/<repo>/resolve/
<rev>/<path>` with byte ranges). Files are kept in memory (hub_state.py); Parquet and PNG files
are listed as LFS entries. Every request but the user-agent registry must carry the token the
server was started with, else it answers 401. `fail_commits` makes chosen commit calls
(1-based, counted over the server's life) answer 500 once, to simulate an interrupted upload.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

from tests.publish.hub_reads import RESOLVE_PATH, ReadRoutes
from tests.publish.hub_state import Commit, HubState, file_entry

REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"
API_PATH = re.compile(
    rf"^/api/{REPO}(?:/(?P<op>preupload|commit|tree|revision|paths-info|settings)(?:/(?P<rest>.*))?)?$"
)
OPEN_PATHS = ("/api/agent-harnesses",)


class _Handler(ReadRoutes, BaseHTTPRequestHandler):
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
        self._send_bytes(status, data, {"Content-Type": "application/json", **(headers or {})})

    def _send_bytes(
        self, status: int, data: bytes, headers: dict[str, str], *, body: bool = True
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        self._send(status, {"error": message}, {"X-Error-Code": code} if code else None)

    def _admit(self) -> HubState | None:
        """Record the request; answer 401 (and return None) unless it carries the token."""
        state = self.server.state
        path = urlparse(self.path).path
        auth = self.headers.get("Authorization")
        with state.lock:
            state.authorizations.append(auth)
            state.requests.append((self.command, path))
        if state.token is None or path in OPEN_PATHS or auth == f"Bearer {state.token}":
            return state
        with state.lock:
            state.rejected.append((self.command, path))
        self._body()
        self._error(401, "Invalid credentials in Authorization header")
        return None

    def _repo(self, state: HubState, match: re.Match[str]) -> str | None:
        key = f"{match['type'][:-1]}/{unquote(match['repo'])}"
        if key not in state.repos:
            self._error(404, "Repository not found", "RepoNotFound")
            return None
        return key

    # -- reads ------------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self._resolve(head=True)

    def do_GET(self) -> None:
        state = self._admit()
        if state is None:
            return
        path = urlparse(self.path).path
        if path == "/api/whoami-v2":
            self._send(200, {"type": "user", "name": "tester", "orgs": [], "auth": {}})
        elif path == "/api/agent-harnesses":  # huggingface_hub's user-agent registry
            self._send(200, {"standardEnvVars": [], "harnesses": {}})
        elif match := API_PATH.match(path):
            key = self._repo(state, match)
            if key is None:
                return
            if match["op"] == "tree":
                self._tree(state, key, unquote(match["rest"] or ""))
            elif match["op"] in (None, "revision"):
                self._info(state, key)
            else:
                self._error(405, "method not allowed")
        elif RESOLVE_PATH.match(path):
            self._resolve(head=False, state=state)
        else:
            self._error(404, f"no route {path}")

    # -- writes -----------------------------------------------------------------------------
    def do_PUT(self) -> None:
        state = self._admit()
        if state is None:
            return
        match = API_PATH.match(urlparse(self.path).path)
        body = self._body()
        if not match or match["op"] != "settings":
            self._error(404, "no route")
            return
        key = self._repo(state, match)
        if key is None:
            return
        payload = json.loads(body or b"{}")
        with state.lock:
            if "private" in payload:
                state.private[key] = bool(payload["private"])
            elif "visibility" in payload:
                state.private[key] = payload["visibility"] == "private"
        self._send(200, {})

    def do_POST(self) -> None:
        state = self._admit()
        if state is None:
            return
        path = urlparse(self.path).path
        body = self._body()
        if path == "/api/repos/create":
            self._create(state, json.loads(body))
        elif path == "/api/validate-yaml":
            self._send(200, {"errors": [], "warnings": []})
        elif match := API_PATH.match(path):
            key = self._repo(state, match)
            if key is None:
                return
            if match["op"] == "preupload":
                self._preupload(state, key, json.loads(body))
            elif match["op"] == "commit":
                self._commit(state, key, body)
            elif match["op"] == "paths-info":
                self._paths_info(state, key, body)
            else:
                self._error(405, "method not allowed")
        else:
            self._error(404, f"no route {path}")

    def _create(self, state: HubState, payload: dict[str, Any]) -> None:
        repo_id = f"{payload['organization'] or 'tester'}/{payload['name']}"
        key = f"{payload.get('type') or 'model'}/{repo_id}"
        url = f"http://{self.headers['Host']}/datasets/{repo_id}"
        with state.lock:
            if key in state.repos:  # the real Hub also answers the url with its 409
                self._send(409, {"error": "You already created this repo", "url": url})
                return
            state.repos[key] = {}
            state.private[key] = bool(
                payload.get("private", payload.get("visibility") == "private")
            )
        self._send(200, {"url": url, "name": repo_id})

    def _preupload(self, state: HubState, key: str, payload: dict[str, Any]) -> None:
        files = state.repos[key]
        with state.lock:
            state.preupload_calls += 1
        answer = [
            {
                "path": f["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": file_entry(f["path"], files[f["path"]])["oid"]
                if f["path"] in files
                else None,
            }
            for f in payload["files"]
        ]
        self._send(200, {"files": answer, "commitOid": state.head(key)})

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
        deleted: list[str] = []
        for item in lines:
            value = item["value"]
            if item["key"] == "file":
                if value.get("encoding") != "base64":
                    self._error(400, "only base64 inline files are supported")
                    return
                added[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] in ("deletedFile", "deletedFolder"):
                deleted.append(value["path"])
            elif item["key"] != "header":
                self._error(400, f"unsupported commit operation {item['key']}")
                return
        with state.lock:
            files = state.repos[key]
            for path in deleted:
                folder = path.rstrip("/") + "/"
                gone = [p for p in files if p == path or p.startswith(folder)]
                if not gone:
                    self._error(404, f"cannot delete {path}: no such file", "EntryNotFound")
                    return
                for p in gone:
                    del files[p]
            files.update(added)
            oid = hashlib.sha1(
                f"{len(state.commits)}:{sorted(added)}:{deleted}".encode()
            ).hexdigest()
            state.commits.append(
                Commit(key, oid, header["summary"], sorted(added), sorted(deleted))
            )
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

    def __init__(self, token: str | None = None) -> None:
        self.state = HubState(token=token)
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
