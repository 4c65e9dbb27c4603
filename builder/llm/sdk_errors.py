"""Map OpenAI / Anthropic SDK exceptions (both Stainless-generated, same shape) to ours.

What may succeed on retry (429, 408, 409, 5xx, timeouts, dropped connections, unreadable
bodies) becomes `TransientLLMError` with the server's `Retry-After`; any other 4xx becomes
`PermanentLLMError` with a message that says what to fix. Messages are scrubbed of the API key,
since some servers echo it back.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from types import ModuleType
from typing import Any, NoReturn

from builder.errors import LLMError, PermanentLLMError, QuotaExceededError, TransientLLMError
from builder.llm.error_kinds import (
    COMPLETION_TOKENS,
    CONTEXT,
    N_UNSUPPORTED,
    SAMPLING,
    TOOLS_REQUIRED,
    refusal_kind,
)

RETRYABLE_STATUS = frozenset({408, 409, 429})

_FIXES = {
    400: "the request was rejected as malformed; check the model's limits and the parameters",
    403: "the key has no access to this model or endpoint; check the account's permissions",
    404: "model or endpoint not found; check `model` and `base_url`",
    413: "the prompt is too large for this endpoint; lower the context length",
    422: "the server rejected a parameter; check that it supports it",
}


def retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` / `retry-after` (delta seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


# What to do about a refusal the taxonomy knows (builder.llm.error_kinds); the providers adapt
# to the last three themselves, so these messages are seen only when adapting could not help.
_REFUSAL_FIXES = {
    CONTEXT: "the prompt does not fit the model's context window (set agent.context_window to "
    "skip such steps before sending them)",
    SAMPLING: "the model refuses this sampling parameter",
    COMPLETION_TOKENS: "the model wants max_completion_tokens instead of max_tokens",
    N_UNSUPPORTED: "the server refuses n > 1",
    TOOLS_REQUIRED: "the request replays tool calls without tool schemas (a replay bug: report it)",
}


def scrub(text: str, key_env: str) -> str:
    """`text` with the API key (and its Bearer form) replaced by ***."""
    secret = os.environ.get(key_env)
    return text.replace(secret, "***") if secret and len(secret) >= 4 else text


def status_error(exc: Any, label: str, key_env: str) -> LLMError:
    """Ours for an HTTP status error: the SDK's, or the direct transport's `HTTPStatusError`."""
    status = int(exc.status_code)
    detail = scrub(_server_message(exc), key_env)
    where = f"{label}: HTTP {status}: {detail}"
    refusal = refusal_kind(getattr(exc, "body", None), str(getattr(exc, "message", "")))
    if refusal is not None and (status < 500 or refusal.kind == N_UNSUPPORTED):
        # read from the body's codes, then its wording, before the status: an old llama.cpp
        # answers its `n` refusal with a 500, which waiting does not cure
        return PermanentLLMError(f"{where}; {_REFUSAL_FIXES[refusal.kind]}", kind=refusal.kind)
    if status == 429 and _is_quota(exc):
        return QuotaExceededError(
            f"{where}; the account has no quota or credit left: waiting will not help. Add "
            "credit or raise the account's limits, then run the same command again (finished "
            "shards and cached answers are kept)"
        )
    if status in RETRYABLE_STATUS or status >= 500:
        kind = "rate_limit" if status == 429 else "timeout" if status == 408 else "server_error"
        return TransientLLMError(where, retry_after=retry_after(_headers(exc)), kind=kind)
    if status == 401:
        fix = f"set {key_env} to a valid API key for this endpoint"
        return PermanentLLMError(f"{where}; {fix}", kind="auth")
    fix = _FIXES.get(status, "the endpoint refused the request; see its message")
    return PermanentLLMError(f"{where}; {fix}", kind="bad_request")


def _headers(exc: Any) -> Any:
    headers = getattr(exc, "headers", None)
    if headers is None:  # the SDK's errors carry the httpx response
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def _is_quota(exc: Any) -> bool:
    """OpenAI's `insufficient_quota` (as `code` or `type`, in the body or its `error`)."""
    body = getattr(exc, "body", None)
    found: list[Any] = []
    if isinstance(body, dict):
        error = body.get("error")
        inner: dict[str, Any] = error if isinstance(error, dict) else body
        found = [inner.get("code"), inner.get("type")]
    text = str(getattr(exc, "message", ""))
    return "insufficient_quota" in found or "insufficient_quota" in text


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or body.get("error", {})
        if isinstance(message, dict):
            message = message.get("message")
        if message:
            return str(message)[:500]
    if isinstance(body, str | bytes):
        return str(body)[:500]
    return str(getattr(exc, "message", exc))[:500]


def _dropped_cause(exc: BaseException) -> str | None:
    """The name of a dropped-connection error in `exc`'s cause chain, if any."""
    seen = exc.__cause__ or exc.__context__
    for _ in range(6):
        if seen is None:
            return None
        name = type(seen).__name__
        if "Disconnected" in name or name in ("ConnectionResetError", "ClientOSError"):
            return name
        seen = seen.__cause__ or seen.__context__
    return None


def map_error(exc: BaseException, sdk: ModuleType, label: str, key_env: str) -> LLMError | None:
    """Our error for an SDK / transport / decoding exception, or None for anything else."""
    if isinstance(exc, sdk.APITimeoutError):
        dropped = _dropped_cause(exc)
        if dropped is not None:  # httpx-aiohttp reports a dropped connection as a timeout
            return TransientLLMError(f"{label}: connection failed ({dropped})", kind="connection")
        return TransientLLMError(f"{label}: request timed out", kind="timeout")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        what = type(cause).__name__ if cause is not None else "connection error"
        return TransientLLMError(f"{label}: connection failed ({what})", kind="connection")
    if isinstance(exc, sdk.APIStatusError):
        return status_error(exc, label, key_env)
    if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError | UnicodeDecodeError):
        detail = scrub(str(exc), key_env)[:300]
        return TransientLLMError(
            f"{label}: unreadable response body ({detail})", kind="bad_response"
        )
    return None


def raise_mapped(exc: BaseException, sdk: ModuleType, label: str, key_env: str) -> NoReturn:
    """Raise our error for `exc`, or `exc` itself when it is not an SDK error.

    A status error is not chained: its SDK message holds the raw server body, which may echo
    the key, and a logged traceback would print it.
    """
    mapped = map_error(exc, sdk, label, key_env)
    if mapped is None:
        raise exc
    if isinstance(exc, sdk.APIStatusError):
        raise mapped from None
    raise mapped from exc
