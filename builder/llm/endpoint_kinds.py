"""Which endpoints are on this machine (free, port-agnostic) and which are paid, in one place.

The request-cache key, the config hash, the price check of the config and the client's
budget all ask these questions; they must agree, so they all call these functions.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")
FREE_PROVIDERS = ("local", "fake")


def is_loopback(base_url: str | None) -> bool:
    """Whether `base_url` names a server on this machine."""
    return bool(base_url) and urlsplit(base_url or "").hostname in LOOPBACK


def endpoint_identity(base_url: str | None) -> str:
    """The base URL as it enters the cache key and the config hash. A server on this machine is
    known by its path only: a managed llama.cpp server gets a new free port every run, and a
    local server restarted on another port must still hit the cache and resume the run."""
    url = (base_url or "").rstrip("/")
    parts = urlsplit(url)
    if parts.hostname in LOOPBACK:
        return urlunsplit((parts.scheme, "localhost", parts.path, parts.query, ""))
    return url


def is_paid(provider: str, base_url: str | None) -> bool:
    """Whether requests to this endpoint cost money: not the embedded model, not a managed
    llama.cpp server (`local-server` without a URL) and not any server on this machine."""
    if provider in FREE_PROVIDERS:
        return False
    if base_url is None:
        return provider != "local-server"
    return not is_loopback(base_url)


def key_needed(provider: str, base_url: str | None) -> bool:
    """Whether the provider cannot start without an API key: Anthropic, and the OpenAI API
    itself; a self-hosted OpenAI-compatible server (a base_url) takes a placeholder key."""
    if provider == "anthropic":
        return True
    return provider == "openai" and base_url is None
