"""How OpenAI-compatible requests travel: the direct aiohttp POST or the OpenAI SDK.

`direct` (the default) measured the least CPU per request of the three here
(benchmarks/bench_run.py, bench_llm.py); the SDK transports stay selectable.
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import Any

from builder.errors import ConfigError

POOLS = 8  # httpx pools per SDK provider (see OpenAIProvider)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every pool: loading the CA bundle costs ~25 ms each time."""
    return ssl.create_default_context()


TRANSPORTS = ("direct", "aiohttp", "httpx")
DEFAULT_TRANSPORT = "direct"  # measured fastest here: benchmarks/bench_run.py
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def sdk_http_client(transport: str) -> Any:
    """The SDK's HTTP client: httpx (its default) or aiohttp (`openai[aiohttp]`)."""
    import openai

    if transport == "aiohttp":
        try:
            return openai.DefaultAioHttpClient(verify=tls_context())
        except (RuntimeError, AttributeError) as exc:
            raise ConfigError(
                f"transport aiohttp needs `pip install 'openai[aiohttp]'` ({exc})"
            ) from None
    return openai.DefaultAsyncHttpxClient(verify=tls_context())


def auth_headers(api_key: str) -> dict[str, str]:
    """What the SDK sends besides the body: the key, and the organisation and project when
    the environment names them (the SDK reads the same variables)."""
    headers = {"Authorization": f"Bearer {api_key}"}
    named = (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project"))
    for env, header in named:
        if os.environ.get(env):
            headers[header] = os.environ[env]
    return headers
