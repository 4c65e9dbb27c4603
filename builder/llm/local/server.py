"""`ManagedLlamaServer`: the embedded model behind a llama.cpp HTTP server on 127.0.0.1.

The "local-server" provider mode: the OpenAI provider talks to this server exactly as it would
to vLLM or SGLang, so the HTTP path, the request cache and the limits are all exercised without
an API key. The server is a child process (`builder.llm.local.serve`, i.e. llama_cpp.server
with the project's chat template) on a free port, health-checked via GET /v1/models, and
stopped on `stop()`, on leaving the `with` block, or at interpreter exit.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from types import TracebackType

import httpx

from builder.errors import LLMError
from builder.llm.chat_template import CHAT_FORMAT_NAME
from builder.llm.model_files import MODEL_ALIAS, ensure_model

HOST = "127.0.0.1"
_REPO_ROOT = Path(__file__).resolve().parents[3]
_PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "LD_LIBRARY_PATH", "NAP_BUILDER_CACHE")


class ManagedLlamaServer:
    """Start with `start()` or `with`; then point an OpenAI client at `base_url` / `model`."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int = 2,
        startup_timeout_s: float = 120.0,
        log_path: Path | None = None,
        model: str = MODEL_ALIAS,
    ) -> None:
        self.model = model
        self.port: int | None = None
        self.log_path = log_path
        self._model_path = model_path
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._timeout = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._temp_log = False  # a log we created is removed after a clean stop

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root (`http://127.0.0.1:PORT/v1`)."""
        if self.port is None:
            raise LLMError("the local llama.cpp server is not started: call start() first")
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> ManagedLlamaServer:
        """Launch the server and return once it answers; raises `LLMError` with its log tail."""
        if self._process is not None:
            return self
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="nap-llama-server-", suffix=".log")
            os.close(fd)
            self.log_path, self._temp_log = Path(name), True
        self.port = _free_port()
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self._command(), stdout=log, stderr=subprocess.STDOUT, env=_child_env()
            )
        atexit.register(self.stop)
        try:
            self._wait_until_healthy()
        except BaseException:
            self._temp_log = False  # keep the log: the error message points to it
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s); safe to call twice."""
        process, self._process = self._process, None
        if process is None:
            return
        atexit.unregister(self.stop)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self._temp_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def exited(self, wait_s: float = 0.0) -> int | None:
        """The server's exit code if it has died (negative: killed by that signal), else None.

        `wait_s` gives a process whose connections just dropped time to be reaped."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=wait_s) if wait_s > 0 else self._process.poll()
        except subprocess.TimeoutExpired:
            return None

    def death_report(self, code: int) -> str:
        """What a user needs when the server died: how it ended and how its log ends."""
        return (
            f"the local llama.cpp server (pid {self.pid}) {describe_exit(code)}; "
            f"its log ({self.log_path}) ends with:\n{self._log_tail()}"
        )

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def restart(self) -> ManagedLlamaServer:
        """Start a fresh server process (on a new port) after the old one died."""
        process, self._process = self._process, None
        if process is not None:
            atexit.unregister(self.stop)
            if process.poll() is None:
                process.kill()
                process.wait()
        return self.start()

    def __enter__(self) -> ManagedLlamaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _command(self) -> list[str]:
        args = {
            "model": str(self._model_path or ensure_model()),
            "model_alias": self.model,
            "host": HOST,
            "port": str(self.port),
            "n_ctx": str(self._n_ctx),
            "n_threads": str(self._n_threads),
            "chat_format": CHAT_FORMAT_NAME,
            # llama_cpp.server defaults to logits for every prompt position: with Gemma 3's
            # 262k vocabulary that doubles prefill time and costs GBs of RAM, and nothing here
            # asks the server for prompt log-probabilities (likelihood NAP runs in process).
            "logits_all": "False",
            "flash_attn": "True",
            "cache": "True",
            "cache_type": "ram",
            "cache_size": str(2 << 30),
            "verbose": "False",
        }
        flags = [part for key, value in args.items() for part in (f"--{key}", value)]
        return [sys.executable, "-m", "builder.llm.local.serve", *flags]

    def _wait_until_healthy(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LLMError(
                    f"the local llama.cpp server {describe_exit(self._process.returncode)} "
                    f"while starting; its log ({self.log_path}) ends with:\n{self._log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        raise LLMError(
            f"the local llama.cpp server did not answer within {self._timeout:.0f} s; raise "
            f"startup_timeout_s or check its log ({self.log_path}), which ends with:\n"
            f"{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        with self.log_path.open(errors="replace") as log:
            return "".join(deque(log, maxlen=lines))


def describe_exit(code: int) -> str:
    """`exited with code 1` or `was killed by SIGSEGV (signal 11)`: a native crash is a signal."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by {name} (signal {-code})"
    return f"exited with code {code}"


def _free_port() -> int:
    """A port free right now on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _child_env() -> dict[str, str]:
    """A minimal environment: llama_cpp.server reads settings (HOST, PORT, API_KEY, MODEL...)
    from the environment, and API keys of other providers have no business in the child."""
    env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_REPO_ROOT), os.environ.get("PYTHONPATH")) if p
    )
    return env
