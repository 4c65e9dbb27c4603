"""Local stand-ins of OpenAI's Batch API and Anthropic's Message Batches, over real HTTP.

They keep jobs, files and results with the providers' documented states and shapes, and can
be told to take a while (`polls_to_finish`), to expire a job half done, or to fail some of its
requests. Answers come from a `FakeAPIServer`'s scripted responders, so a batch run and an
online run against the same responders get the same answers. `submitted` counts every request
line ever submitted, by its body, so a test can prove nothing is submitted twice.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.llm.servers import FakeAPIServer, _Server


@dataclass
class Job:
    id: str
    api: str  # "openai" | "anthropic"
    lines: list[dict[str, Any]]
    created_at: int
    metadata: dict[str, str] = field(default_factory=dict)
    input_file_id: str | None = None
    polls: int = 0
    state: str = "in_progress"  # in_progress | completed/ended | expired | cancelled
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # custom_id -> outcome
    output_file_id: str | None = None
    error_file_id: str | None = None


def body_digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


class BatchAPIServer:
    """`with BatchAPIServer() as server:` OpenAI at `server.openai_url`, Anthropic at
    `server.anthropic_url`."""

    def __init__(
        self,
        answers: FakeAPIServer | None = None,
        *,
        polls_to_finish: int = 2,
        expire_jobs: int = 0,
        fail: Callable[[str, dict[str, Any]], bool] | None = None,
    ) -> None:
        self.answers = answers or FakeAPIServer()
        self.polls_to_finish = polls_to_finish
        self.expire_jobs = expire_jobs  # this many next jobs expire with half their requests
        self.fail = fail  # (custom_id, body) -> fail this request (its first submission only)
        self.jobs: dict[str, Job] = {}
        self.files: dict[str, bytes] = {}
        self.submitted: Counter[str] = Counter()  # body digest -> times submitted
        self.creates = 0
        self.lock = threading.Lock()
        self._ids = itertools.count(1)
        self._failed_once: set[str] = set()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.root}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.root

    def __enter__(self) -> BatchAPIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- job lifecycle -------------------------------------------------------------------

    def create(self, api: str, lines: list[dict[str, Any]], **extra: Any) -> Job:
        with self.lock:
            self.creates += 1
            prefix = "batch_" if api == "openai" else "msgbatch_"
            job = Job(f"{prefix}{next(self._ids)}", api, lines, int(time.time()), **extra)
            for line in lines:
                self.submitted[body_digest(line["body" if api == "openai" else "params"])] += 1
            self.jobs[job.id] = job
            return job

    def poll(self, job_id: str) -> Job | None:
        with self.lock:
            job = self.jobs.get(job_id)
            if job is None or job.state != "in_progress":
                return job
            job.polls += 1
            if job.polls >= self.polls_to_finish:
                self._finish(job)
            return job

    def _finish(self, job: Job) -> None:
        expire = self.expire_jobs > 0
        if expire:
            self.expire_jobs -= 1
        for i, line in enumerate(job.lines):
            custom_id = line["custom_id"]
            body = line["body"] if job.api == "openai" else line["params"]
            path = "/v1/chat/completions" if job.api == "openai" else "/v1/messages"
            refused = self.answers.refusal(path, body)
            if expire and i % 2 == 1:
                job.results[custom_id] = {"type": "expired"}
            elif refused is not None:  # a line the online API would refuse fails alike
                job.results[custom_id] = {"type": "refused", "status": refused[0],
                                          "body": refused[1]}  # fmt: skip
            elif (
                self.fail
                and body_digest(body) not in self._failed_once
                and self.fail(custom_id, body)
            ):
                self._failed_once.add(body_digest(body))
                job.results[custom_id] = {"type": "errored", "status": 500}
            else:
                number = next(self._ids)
                answer = (
                    self.answers.openai_answer(body, number)[1]
                    if job.api == "openai"
                    else self.answers.anthropic_answer(body, number)[1]
                )
                job.results[custom_id] = {"type": "succeeded", "body": answer}
        job.state = "expired" if expire else ("completed" if job.api == "openai" else "ended")
        if job.api == "openai":
            self._write_openai_files(job)

    def _write_openai_files(self, job: Job) -> None:
        output, errors = [], []
        for custom_id, outcome in job.results.items():
            if outcome["type"] == "succeeded":
                response = {"status_code": 200, "request_id": "req", "body": outcome["body"]}
                output.append({"id": "r", "custom_id": custom_id, "response": response})
            elif outcome["type"] == "refused":  # platform.openai.com/docs/guides/batch
                response = {"status_code": outcome["status"], "request_id": "req",
                            "body": outcome["body"]}  # fmt: skip
                errors.append({"id": "r", "custom_id": custom_id, "response": response})
            elif outcome["type"] == "expired":
                error = {"code": "batch_expired", "message": "not completed in time"}
                errors.append({"id": "r", "custom_id": custom_id, "response": None, "error": error})
            else:
                body = {"error": {"message": "server error", "type": "server_error"}}
                response = {"status_code": 500, "request_id": "req", "body": body}
                errors.append({"id": "r", "custom_id": custom_id, "response": response})
        for kind, rows in (("output", output), ("error", errors)):
            if rows:
                file_id = f"file-{kind}-{job.id}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                setattr(job, f"{kind}_file_id", file_id)

    # --- documented shapes ---------------------------------------------------------------

    def openai_batch(self, job: Job) -> dict[str, Any]:
        done = sum(1 for r in job.results.values() if r["type"] == "succeeded")
        failed = len(job.results) - done
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": job.input_file_id,
            "completion_window": "24h",
            "status": job.state,
            "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id,
            "created_at": job.created_at,
            "request_counts": {"total": len(job.lines), "completed": done, "failed": failed},
            "metadata": job.metadata,
        }

    def anthropic_batch(self, job: Job) -> dict[str, Any]:
        counts = Counter(r["type"] for r in job.results.values())
        ended = job.state != "in_progress"
        return {
            "id": job.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(job.lines),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"] + counts["refused"],
                "canceled": 0,
                "expired": counts["expired"],
            },
            "created_at": "2026-12-01T00:00:00Z",
            "expires_at": "2026-12-02T00:00:00Z",
            "ended_at": "2026-12-01T00:01:00Z" if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.root}/v1/messages/batches/{job.id}/results" if ended else None,
        }

    def anthropic_results(self, job: Job) -> bytes:
        rows = []
        for custom_id, outcome in job.results.items():
            if outcome["type"] == "succeeded":
                result: dict[str, Any] = {"type": "succeeded", "message": outcome["body"]}
            elif outcome["type"] == "refused":  # the online body, as an errored result
                result = {"type": "errored", "error": outcome["body"]}
            elif outcome["type"] == "errored":
                error = {"type": "api_error", "message": "Internal server error"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": "expired"}
            rows.append({"custom_id": custom_id, "result": result})
        return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _handler(server: BatchAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent."""

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?")[0]
            if path == "/v1/files":
                file_id = f"file-in-{len(server.files) + 1}"
                server.files[file_id] = _multipart_file(self.headers["content-type"], raw)
                self._json(200, {"id": file_id, "object": "file", "bytes": len(raw),
                                 "created_at": 0, "filename": "batch.jsonl",
                                 "purpose": "batch", "status": "processed"})  # fmt: skip
            elif path == "/v1/batches":
                body = json.loads(raw)
                text = server.files[body["input_file_id"]].decode()
                lines = [json.loads(line) for line in text.splitlines() if line.strip()]
                job = server.create(
                    "openai",
                    lines,
                    metadata=body.get("metadata") or {},
                    input_file_id=body["input_file_id"],
                )
                self._json(200, server.openai_batch(job))
            elif path == "/v1/messages/batches":
                job = server.create("anthropic", json.loads(raw)["requests"])
                self._json(200, server.anthropic_batch(job))
            else:
                self._json(404, {"error": {"message": f"no route {path}"}})

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            parts = path.strip("/").split("/")
            if path == "/v1/batches":
                with server.lock:
                    jobs = [j for j in server.jobs.values() if j.api == "openai"]
                data = [server.openai_batch(j) for j in reversed(jobs)]
                self._json(200, {"object": "list", "data": data, "has_more": False})
            elif parts[:2] == ["v1", "batches"] and len(parts) == 3:
                job = server.poll(parts[2])
                self._found(job, lambda j: server.openai_batch(j))
            elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                payload = server.files.get(parts[2])
                if payload is None:
                    self._json(404, {"error": {"message": "no such file"}})
                else:
                    self._send(200, payload, "application/jsonl")
            elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                job = server.poll(parts[3])
                self._found(job, lambda j: server.anthropic_batch(j))
            elif parts[:3] == ["v1", "messages", "batches"] and parts[-1] == "results":
                job = server.jobs.get(parts[3])
                if job is None or job.state == "in_progress":
                    self._json(404, {"error": {"message": "results not ready"}})
                else:
                    self._send(200, server.anthropic_results(job), "application/x-jsonl")
            else:
                self._json(404, {"error": {"message": f"no route {path}"}})

        def _found(self, job: Job | None, shape: Callable[[Job], dict[str, Any]]) -> None:
            if job is None:
                self._json(404, {"error": {"message": "no such batch"}})
            else:
                self._json(200, shape(job))

        def _json(self, code: int, value: Any) -> None:
            self._send(code, json.dumps(value).encode(), "application/json")

        def _send(self, code: int, payload: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    message = BytesParser(policy=HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + raw
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    raise ValueError("no file part in the upload")
