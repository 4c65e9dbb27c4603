"""JSON over HTTP POST on one aiohttp session: the `direct` transport of OpenAI-compatible
endpoints.

Why not the SDK: per request, the OpenAI SDK builds an httpx request, runs its auth and retry
wrappers and copies headers several times; at 64 requests in flight that costs more CPU than
the rest of the client together (benchmarks/bench_run.py measures both). A POST of JSON bytes
needs none of that. What the SDK gave us is kept here: bearer auth, the organisation and
project headers, proxies from the environment, verified TLS (aiohttp's default context), a total
timeout, and errors mapped to ours (connection, timeout, unreadable body; HTTP status errors
are raised as `HTTPStatusError` so a provider can adapt to a refusal before mapping it).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.parse
import urllib.request
from typing import Any

import aiohttp

from builder import __version__
from builder.errors import TransientLLMError
from builder.llm.fragments import dumps
from builder.llm.sdk_errors import scrub


class HTTPStatusError(Exception):
    """A reply with status >= 400: what the endpoint said, for adapting and for mapping."""

    def __init__(self, status_code: int, body: Any, message: str, headers: Any) -> None:
        self.status_code = status_code
        self.body = body  # the decoded JSON body, or its text when it is not JSON
        self.message = message
        self.headers = headers
        super().__init__(self.message)


def _decoded(raw: bytes) -> tuple[Any, str]:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text), text
    except ValueError:
        return text, text


def env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for `base_url` (HTTPS_PROXY, HTTP_PROXY, NO_PROXY...),
    looked up once: aiohttp's `trust_env` looks it up, and .netrc in a thread, per request."""
    parts = urllib.parse.urlsplit(base_url)
    host = parts.hostname or ""
    if urllib.request.proxy_bypass_environment(host):  # type: ignore[attr-defined]
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(parts.scheme) or proxies.get("all") or None


class JsonHTTP:
    """POST a JSON body to `base_url + path` and return the decoded JSON reply.

    The session belongs to the event loop it was opened on (aiohttp's rule): a call from
    another loop opens a new one. `aclose` must run on the loop that used it.
    """

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        timeout_s: float,
        max_connections: int,
        tls: ssl.SSLContext | bool = True,
        label: str,
        key_env: str,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"nap-builder/{__version__}",
            **headers,
        }
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._max_connections = max_connections
        self._tls = tls
        self._label = label
        self._key_env = key_env
        self._proxy = env_proxy(self.base_url)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ssl=self._tls)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout)
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()

    async def post(self, path: str, body: bytes | dict[str, Any]) -> Any:
        """The reply's JSON for a body (encoded already, or a dict to encode). Raises
        `HTTPStatusError` for a status >= 400 and `TransientLLMError` for what a retry may fix
        (connection, timeout, unreadable body)."""
        data = body if isinstance(body, bytes) else dumps(body).encode("utf-8")
        url = self.base_url + path
        try:
            session = self._session_here()
            async with session.post(
                url, data=data, headers=self._headers, proxy=self._proxy
            ) as reply:
                raw = await reply.read()
                status, headers = reply.status, reply.headers
        except TimeoutError:
            total = self._timeout.total
            raise TransientLLMError(
                f"{self._label}: request timed out after {total:g} s", kind="timeout"
            ) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise TransientLLMError(
                f"{self._label}: connection failed ({type(exc).__name__})", kind="connection"
            ) from None
        except aiohttp.ClientResponseError as exc:  # a reply that is not valid HTTP
            detail = scrub(str(exc), self._key_env)[:300]
            raise TransientLLMError(
                f"{self._label}: unreadable response ({detail})", kind="bad_response"
            ) from None
        if status >= 400:
            decoded, text = _decoded(raw)
            message = f"Error code: {status} - {scrub(text, self._key_env)[:2000]}"
            raise HTTPStatusError(status, decoded, message, headers)
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            detail = scrub(str(exc), self._key_env)[:300]
            raise TransientLLMError(
                f"{self._label}: unreadable response body ({detail})", kind="bad_response"
            ) from None
