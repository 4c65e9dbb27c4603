"""Real local HTTP servers on 127.0.0.1 speaking the OpenAI chat-completions and Anthropic
Messages shapes, for tests and benchmarks.

They count requests, record bodies and headers in memory (never on disk), track how many
requests are in flight at once, and play a fault script: one scripted behaviour per incoming
request (status with headers, slow answer, truncated body, invalid JSON, dropped connection),
then normal answers.

They are strict by default: each refuses what the real service it stands for refuses, with
that service's real error body (`tests/llm/refusals.py`, every rule cited): `flavour` picks
the service (`openai`, `vllm`, `vllm-engine`, `sglang`, `llama-server`, `llama-cpp-python`;
`anthropic` for the Messages API), `context_window` its window. `throttle` answers that share
of requests with a 429 and `Retry-After: 0` (each request at most `throttle_repeats` times in
a row, and again whenever it comes back within `throttle_window_s` of its last 429: the limit
has not reset yet), as rate-limited services do.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.llm.refusals import RATE_LIMITED, refuse


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: `status` (with headers/body), `slow`, `truncate`,
    `invalid_json`, `drop`, `trickle` (a valid body sent one byte every `delay_s`) or
    `no_choices` (a 200 with an empty `choices` list). A body may contain `{auth}`: the key
    the client sent, echoed back like some real servers do."""

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


def openai_completion(
    body: dict[str, Any], number: int, *, honour_n: bool = True, text: TextResponder = default_text
) -> dict[str, Any]:
    """A chat.completion answer: `n` choices (one when `honour_n` is off) and usage."""
    n = int(body.get("n") or 1) if honour_n else 1
    choices = []
    for i in range(n):
        reply = text(body, i, number)
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
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "m"),
        "choices": choices,
        "usage": usage,
    }


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
        reject_json_schema: int | None = None,  # the status to refuse json_schema with
        reject_strict: int | None = None,  # the status to refuse json_schema `strict` with
        reject_max_tokens: bool = False,  # answer `max_tokens` as o-series models do
        text: TextResponder = default_text,
        anthropic_content: Callable[[dict[str, Any], int], list[dict[str, Any]]] | None = None,
        anthropic_usage: dict[str, int] | None = None,
        flavour: str | None = None,
        context_window: int | None = None,
        throttle: float = 0.0,
        throttle_repeats: int = 3,
        throttle_window_s: float = 0.2,
    ) -> None:
        self.api = api
        self.flavour = flavour or ("openai" if api == "openai" else "anthropic")
        self.context_window = context_window
        self.throttle = throttle
        self.throttle_repeats = throttle_repeats
        self.throttle_window_s = throttle_window_s
        self._throttled_at: dict[str, float] = {}
        self.throttled = 0
        self.refused: list[tuple[int, dict[str, Any]]] = []  # every refusal sent, in order
        self._random = random.Random(0)
        self._throttled_in_a_row: dict[str, int] = {}
        self.latency_s = latency_s
        self.faults: deque[Fault] = deque(faults)
        self.honour_n = honour_n
        self.reject_json_schema = reject_json_schema
        self.reject_strict = reject_strict
        self.reject_max_tokens = reject_max_tokens
        self.text = text
        self.anthropic_content = anthropic_content
        self.anthropic_usage = anthropic_usage or {"input_tokens": 10, "output_tokens": 5}
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.model_lists = 0  # GET /models answered
        self.refuse_key = False  # answer 401 to every request, as for a wrong API key
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
            return mean_in_flight(self.intervals, start, end)

    def __enter__(self) -> FakeAPIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- answers -----------------------------------------------------------------------

    def next_fault(self, body: dict[str, Any] | None = None) -> Fault | None:
        with self.lock:
            if self.faults:
                return self.faults.popleft()
            if self.throttle and body is not None:
                return self._throttle(body)
            return None

    def _throttle(self, body: dict[str, Any]) -> Fault | None:
        """A 429 with `Retry-After: 0` for a `throttle` share of requests (lock held)."""
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        row = self._throttled_in_a_row.get(digest, 0)
        now = time.monotonic()
        # a retry within the window meets the same exhausted limit: a client that honours
        # `Retry-After: 0` literally spends its retries here
        again = now - self._throttled_at.get(digest, -1e9) < self.throttle_window_s
        if not again and (row >= self.throttle_repeats or self._random.random() >= self.throttle):
            self._throttled_in_a_row[digest] = 0
            return None
        self._throttled_in_a_row[digest] = row + 1
        self._throttled_at[digest] = now
        self.throttled += 1
        body_text = json.dumps(RATE_LIMITED["openai" if self.api == "openai" else "anthropic"])
        return Fault("status", 429, {"retry-after": "0"}, body_text)

    def refusal(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """What the real service would refuse this request with (strict stand-in), if any."""
        if path.endswith("/chat/completions") and self.flavour != "anthropic":
            found = refuse(self.flavour, body, self.context_window)
        elif path.endswith("/messages"):
            found = refuse("anthropic", body, self.context_window)
        else:
            return None
        if found is not None:
            with self.lock:
                self.refused.append(found)
        return found

    def openai_answer(self, body: dict[str, Any], number: int) -> tuple[int, dict[str, Any]]:
        fmt = body.get("response_format") or {}
        if self.reject_json_schema and fmt.get("type") == "json_schema":
            detail = "response_format.type: Input should be 'text' or 'json_object'"
            return self.reject_json_schema, {"detail": [{"msg": detail}]}
        if self.reject_strict and (fmt.get("json_schema") or {}).get("strict"):
            return self.reject_strict, {"error": {"message": "strict is not supported"}}
        if self.reject_max_tokens and "max_tokens" in body:
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return 400, {"error": {"message": message, "param": "max_tokens"}}
        return 200, openai_completion(body, number, honour_n=self.honour_n, text=self.text)

    def other_answer(self, path: str, body: dict[str, Any], number: int) -> tuple[int, Any]:
        """Routes besides chat and messages; subclasses add some (prompt log-probabilities)."""
        return 404, {"error": {"message": f"no route {path}"}}

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


# OpenAI: GET /v1/models (https://platform.openai.com/docs/api-reference/models/list);
# Anthropic: GET /v1/models (https://docs.anthropic.com/en/api/models-list)
def models_list(api: str) -> dict[str, Any]:
    if api == "anthropic":
        model = {"type": "model", "id": "claude-fake", "display_name": "Claude Fake"}
        return {"data": [model], "has_more": False, "first_id": "claude-fake"}
    model = {"id": "fake-model", "object": "model", "created": 0, "owned_by": "nap-builder"}
    return {"object": "list", "data": [model]}


# The bodies both APIs send for a key they do not take (401).
AUTH_ERROR = {
    "openai": {
        "error": {
            "message": "Incorrect API key provided: sk-wrong. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    },
    "anthropic": {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    },
}


def _handler(server: FakeAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: request lines are not test output."""

        def do_GET(self) -> None:
            """The models list (the pre-flight check asks for it; not counted as a request)."""
            with server.lock:
                server.model_lists += 1
            if server.refuse_key:  # as a server that does not take the key: 401, its body
                payload = json.dumps(AUTH_ERROR[server.api]).encode()
                self.send_response(401)
            else:
                payload = json.dumps(models_list(server.api)).encode()
                self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

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
            self._started: float | None = started
            try:
                self._answer(body, number)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                self._leave()

        def _leave(self) -> None:
            """The request stops being in flight when its answer goes out, not when this thread
            next runs: once the client has the answer it may send its next request on another
            connection before this thread reaches its `finally`, and counting until then showed
            one more in flight than the client ever had (seen on a loaded 2-core CI run)."""
            started, self._started = getattr(self, "_started", None), None
            if started is not None:
                with server.lock:
                    server.in_flight -= 1
                    server.intervals.append((started, time.perf_counter()))

        def _answer(self, body: dict[str, Any], number: int) -> None:
            fault = server.next_fault(body)
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
            elif fault is not None and fault.kind == "trickle":
                payload = json.dumps(openai_completion(body, number)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    time.sleep(fault.delay_s)
                return
            elif fault is not None and fault.kind == "no_choices":
                answer = openai_completion(body, number) | {"choices": []}
                self._send(200, json.dumps(answer).encode())
                return
            elif fault is not None and fault.kind == "status":
                auth = self.headers.get("authorization") or self.headers.get("x-api-key") or ""
                text = fault.body or json.dumps({"error": {"message": f"status {fault.status}"}})
                self._send(fault.status, text.replace("{auth}", auth).encode(), fault.headers)
                return
            refused = server.refusal(self.path, body)
            if refused is not None:
                self._send(refused[0], json.dumps(refused[1]).encode())
                return
            if self.path.endswith("/chat/completions"):
                code, answer = server.openai_answer(body, number)
            elif self.path.endswith("/messages"):
                code, answer = server.anthropic_answer(body, number)
            else:
                code, answer = server.other_answer(self.path, body, number)
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
            self._leave()  # before the body: the client cannot finish reading before it
            self.wfile.write(payload)
            self.wfile.flush()

    return Handler


def mean_in_flight(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Time-averaged number of requests being served within [start, end]."""
    busy = sum(max(0.0, min(b, end) - max(a, start)) for a, b in intervals)
    return busy / (end - start) if end > start else 0.0


def saturation(intervals: list[tuple[float, float]], concurrency: int) -> dict[str, float]:
    """In-flight requests while the job could still fill `concurrency` slots, as a fraction
    of it: the mean over [first arrival, the moment fewer than `concurrency` requests were
    left unfinished], i.e. up to the (N - concurrency + 1)-th completion. After that moment
    no client can hold the limit (a job of 1,608 requests at 64 ends on a wave of 8), so
    the whole-span mean mixes the client's scheduling with the job's size; this figure is
    the client's alone (`drain_s`: how long the end took)."""
    first = min(a for a, _ in intervals)
    ends = sorted(b for _, b in intervals)
    drain = ends[len(ends) - concurrency] if len(ends) >= concurrency else first
    return {
        "saturated_in_flight": mean_in_flight(intervals, first, drain) / concurrency,
        "drain_s": ends[-1] - drain,
    }


def _query_int(head: bytes, name: str) -> int | None:
    """`?name=N` in the request line, or None."""
    target = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[1]
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query).get(name, [])
    return int(values[0]) if values and values[0].isdigit() else None


class AsyncOpenAIServer:
    """A lean asyncio HTTP/1.1 server with the OpenAI answer shape, for benchmarks.

    `FakeAPIServer` (http.server, a thread per connection) tops out near 250 requests/s here,
    below what the client is measured at; this one keeps connections alive, sleeps with
    asyncio, and tracks in-flight requests the same way.
    """

    def __init__(
        self, *, latency_s: float = 0.0, text: TextResponder = default_text, record: bool = False
    ) -> None:
        self.latency_s = latency_s
        self.text = text
        # keep request bodies as received (GET /bodies, GET /payloads), for replaying them
        self.record = record
        self.bodies: list[bytes] = []
        self.count = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.intervals: list[tuple[float, float]] = []
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def mean_in_flight(self, start: float, end: float) -> float:
        return mean_in_flight(self.intervals, start, end)

    def __enter__(self) -> AsyncOpenAIServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._thread.join(10)
        self._loop.close()

    async def _stop(self) -> None:
        """Cancel open connections so that nothing is left pending on a closed loop."""
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._loop.stop()

    async def _complete(self, body: dict[str, Any], raw: bytes) -> dict[str, Any]:
        started = time.perf_counter()
        self.count += 1
        number = self.count
        if self.record:
            self.bodies.append(raw)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return openai_completion(body, number, text=self.text)
        finally:
            self.in_flight -= 1
            self.intervals.append((started, time.perf_counter()))

    def stats(self, concurrency: int | None = None) -> dict[str, Any]:
        """Served count, peak and time-averaged in-flight requests (also at `GET /stats`,
        `GET /stats?concurrency=N`; `GET /bodies` gives the recorded bodies, `GET /payloads`
        the same as sent, each after its length and a newline; `GET /reset` starts a new
        measurement). With `concurrency`, also the in-flight mean while the job
        could fill that limit (`saturation`)."""
        if not self.intervals:
            return {"count": 0, "peak_in_flight": 0, "mean_in_flight": 0.0}
        start = min(a for a, _ in self.intervals)
        end = max(b for _, b in self.intervals)
        tenth = (end - start) / 10
        figures: dict[str, Any] = {
            "count": self.count,
            "peak_in_flight": self.peak_in_flight,
            "mean_in_flight": self.mean_in_flight(start, end),
            "span_s": end - start,
            # on the machine's monotonic clock (perf_counter), shared by every process here
            "first_arrival": start,
            "last_answer": end,
            # where in-flight falls short: the mean in each tenth of the span
            "deciles": [
                round(self.mean_in_flight(start + k * tenth, start + (k + 1) * tenth), 1)
                for k in range(10)
            ],
        }
        if concurrency:
            figures.update(saturation(self.intervals, concurrency))
        return figures

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        )
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        self._loop.run_forever()
        server.close()
        self._loop.run_until_complete(server.wait_closed())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                raw = await reader.readexactly(length)
                body = json.loads(raw or b"{}")
                answer: dict[str, Any] | bytes
                if head.startswith(b"GET /") and b"/models" in head.split(b"\r\n", 1)[0]:
                    answer = models_list("openai")  # the pre-flight check: not recorded
                elif head.startswith(b"GET /stats"):
                    answer = self.stats(_query_int(head, "concurrency"))
                elif head.startswith(b"GET /bodies"):
                    answer = {"bodies": [json.loads(b) for b in self.bodies]}
                elif head.startswith(b"GET /payloads"):  # no JSON round trip for big jobs
                    answer = b"".join(b"%d\n%s" % (len(b), b) for b in self.bodies)
                elif head.startswith(b"GET /reset"):  # a new measurement starts
                    self.count = self.peak_in_flight = 0
                    self.intervals, self.bodies = [], []
                    answer = {"reset": True}
                else:
                    answer = await self._complete(body, raw)
                payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(payload), payload)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


def main() -> None:
    """`python -m tests.llm.servers LATENCY_S`: an `AsyncOpenAIServer` in its own process (so
    that a benchmark's client does not share its interpreter); prints the port, runs until
    killed."""
    import sys

    with AsyncOpenAIServer(latency_s=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0) as server:
        print(server.port, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
