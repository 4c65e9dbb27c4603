"""Real local HTTP servers on 127.0.0.1 speaking the OpenAI chat-completions and Anthropic
Messages shapes, for tests and benchmarks.

They count requests, record bodies and headers in memory (never on disk), track how many
requests are in flight at once, and play a fault script: one scripted behaviour per incoming
request (status with headers, slow answer, truncated body, invalid JSON, dropped connection),
then normal answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: `status` (with headers/body), `slow`, `truncate`,
    `invalid_json` or `drop`. A body may contain `{auth}`: the key the client sent, echoed back
    like some real servers do."""

    kind: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay_s: float = 0.0


def status(code: int, body: str | None = None, **headers: str) -> Fault:
    return Fault("status", code, {k.replace("_", "-"): v for k, v in headers.items()}, body)


# (request body, sample index, request number) -> completion text, or a whole OpenAI message
TextResponder = Callable[[dict[str, Any], int, int], str | dict[str, Any]]


def default_text(body: dict[str, Any], index: int, number: int) -> str:
    seed = body.get("seed")
    return f"reply {number}.{index}" + (f" seed={seed}" if seed is not None else "")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up on a slow answer are part of the tests: stay quiet."""


class FakeAPIServer:
    """`with FakeAPIServer(api="openai") as server: server.base_url ...`"""

    def __init__(
        self,
        *,
        api: str = "openai",
        latency_s: float = 0.0,
        faults: Iterable[Fault] = (),
        honour_n: bool = True,
        reject_json_schema: bool = False,
        text: TextResponder = default_text,
        anthropic_content: Callable[[dict[str, Any], int], list[dict[str, Any]]] | None = None,
        anthropic_usage: dict[str, int] | None = None,
    ) -> None:
        self.api = api
        self.latency_s = latency_s
        self.faults: deque[Fault] = deque(faults)
        self.honour_n = honour_n
        self.reject_json_schema = reject_json_schema
        self.text = text
        self.anthropic_content = anthropic_content
        self.anthropic_usage = anthropic_usage or {"input_tokens": 10, "output_tokens": 5}
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.intervals: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if self.api == "openai" else root

    def mean_in_flight(self, start: float, end: float) -> float:
        """Time-averaged number of requests being served within [start, end]."""
        with self.lock:
            busy = sum(max(0.0, min(b, end) - max(a, start)) for a, b in self.intervals)
        return busy / (end - start) if end > start else 0.0

    def __enter__(self) -> FakeAPIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- answers -----------------------------------------------------------------------

    def next_fault(self) -> Fault | None:
        with self.lock:
            return self.faults.popleft() if self.faults else None

    def openai_answer(self, body: dict[str, Any], number: int) -> tuple[int, dict[str, Any]]:
        fmt = body.get("response_format") or {}
        if self.reject_json_schema and fmt.get("type") == "json_schema":
            detail = "response_format.type: Input should be 'text' or 'json_object'"
            return 422, {"detail": [{"msg": detail}]}
        n = int(body.get("n") or 1) if self.honour_n else 1
        choices = []
        for i in range(n):
            reply = self.text(body, i, number)
            message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            choices.append({"index": i, "message": message, "finish_reason": finish})
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": 3 * n,
            "total_tokens": prompt + 3 * n,
            "prompt_tokens_details": {"cached_tokens": prompt // 2},
        }
        answer = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "m"),
            "choices": choices,
            "usage": usage,
        }
        return 200, answer

    def anthropic_answer(self, body: dict[str, Any], number: int) -> tuple[int, dict[str, Any]]:
        content = (
            self.anthropic_content(body, number)
            if self.anthropic_content is not None
            else [{"type": "text", "text": f"reply {number}"}]
        )
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        answer = {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "m"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self.anthropic_usage,
        }
        return 200, answer


def _handler(server: FakeAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: request lines are not test output."""

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            started = time.perf_counter()
            with server.lock:
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                number = len(server.requests)
                server.in_flight += 1
                server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
            try:
                self._answer(body, number)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                with server.lock:
                    server.in_flight -= 1
                    server.intervals.append((started, time.perf_counter()))

        def _answer(self, body: dict[str, Any], number: int) -> None:
            fault = server.next_fault()
            if server.latency_s:
                time.sleep(server.latency_s)
            if fault is not None and fault.kind == "slow":
                time.sleep(fault.delay_s)
            elif fault is not None and fault.kind == "drop":
                self.close_connection = True
                return
            elif fault is not None and fault.kind == "truncate":
                self._send(200, b'{"id": "chatcmpl-x", "choices": [', declared=4096)
                self.close_connection = True
                return
            elif fault is not None and fault.kind == "invalid_json":
                self._send(200, b'{"id": "chatcmpl-x", "choices": [{"index": 0,,,}')
                return
            elif fault is not None and fault.kind == "status":
                auth = self.headers.get("authorization") or self.headers.get("x-api-key") or ""
                text = fault.body or json.dumps({"error": {"message": f"status {fault.status}"}})
                self._send(fault.status, text.replace("{auth}", auth).encode(), fault.headers)
                return
            if self.path.endswith("/chat/completions"):
                code, answer = server.openai_answer(body, number)
            elif self.path.endswith("/messages"):
                code, answer = server.anthropic_answer(body, number)
            else:
                code, answer = 404, {"error": {"message": f"no route {self.path}"}}
            self._send(code, json.dumps(answer).encode())

        def _send(
            self,
            code: int,
            payload: bytes,
            headers: dict[str, str] | None = None,
            declared: int | None = None,
        ) -> None:
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(declared or len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

    return Handler
