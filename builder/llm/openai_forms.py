"""Which forms of a request body to try on an OpenAI-compatible server, richest first, and what
a server's answer teaches about it (kept in `Capabilities` for the rest of the run).

A form is (structured-output dialect, content as lists of parts or not). Servers differ in
what they honour: `json_schema` with `strict: true` when the schema allows it, then without
`strict`, then `json_object` with the schema (llama.cpp); content lists, else plain strings.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from builder.llm.error_kinds import (
    COMPLETION_TOKENS,
    N_UNSUPPORTED,
    SAMPLING,
    Refusal,
    refusal_kind,
)
from builder.llm.http_json import HTTPStatusError
from builder.llm.messages import root_object_schema
from builder.llm.openai_wire import Capabilities, Params, is_strict_compatible
from builder.llm.protocol import ChatRequest

Form = tuple[str, bool]  # (dialect, content parts)
ADAPT_ROUNDS = 4  # sends of one body at most while adapting (max_tokens, temperature, top_p)
log = logging.getLogger(__name__)


class RefusesN(Exception):
    """The server refused `n > 1`: the caller fans out instead (not an error of the run)."""


def forms(capabilities: Capabilities, request: ChatRequest) -> list[Form]:
    """The forms to try for `request`: only the known-good one once a server answered."""
    dialects = [capabilities.response_format or "json_schema"]
    if request.json_schema is not None and capabilities.response_format is None:
        strict = is_strict_compatible(root_object_schema(request.json_schema))
        dialects = [*(["json_schema_strict"] if strict else []), "json_schema", "json_object"]
    has_parts = any(m.content_parts for m in request.messages)
    parts = [capabilities.content_parts is not False] if has_parts else [False]
    if has_parts and capabilities.content_parts is None:
        parts.append(False)
    return [(d, p) for p in parts for d in dialects]


def learn(
    capabilities: Capabilities, request: ChatRequest, form: Form, refused: int | None
) -> list[str]:
    """Record that `form` worked for `request` (after a refusal with HTTP status `refused`, or
    at once); what is worth a log line comes back."""
    dialect, parts = form
    said: list[str] = []
    if request.json_schema is not None and capabilities.response_format is None:
        capabilities.response_format = dialect
        if refused is not None:
            said.append(f"refused richer structured output (HTTP {refused}): using {dialect}")
    if any(m.content_parts for m in request.messages) and capabilities.content_parts is None:
        capabilities.content_parts = parts
        if not parts:
            said.append(f"refused content lists (HTTP {refused}): sending their text as strings")
    return said


def adapt(
    capabilities: Capabilities, refusal: Refusal | None, request: ChatRequest, n: int, sent: Params
) -> str | None:
    """Learn from a refusal of a parameter the body *as sent* (`sent`) carried: None when
    adapting cannot help (the error stands), else what to log ("" when another request had
    already taught the same; the caller sends again in the new form either way)."""
    if refusal is None:
        return None
    tokens_param, left_out = sent
    if refusal.kind == COMPLETION_TOKENS:
        if tokens_param != "max_tokens" or request.max_tokens is None:
            return None
        first = capabilities.max_tokens_param != "max_completion_tokens"
        capabilities.max_tokens_param = "max_completion_tokens"
        return "wants max_completion_tokens: using it from now on" if first else ""
    if refusal.kind == SAMPLING:
        param = refusal.param if refusal.param in ("temperature", "top_p") else "temperature"
        carried = param == "temperature" or request.top_p is not None
        if param in left_out or not carried:
            return None
        first = param not in capabilities.refused_sampling
        capabilities.refused_sampling |= {param}
        said = f"refuses {param}: sent without it (the model's default) from now on"
        return said if first else ""
    if refusal.kind == N_UNSUPPORTED and n > 1:
        first = capabilities.n is not False
        capabilities.n = False
        return "refuses n > 1: one request per sample from now on" if first else ""
    return None


async def send_adapting(
    capabilities: Capabilities,
    request: ChatRequest,
    n: int,
    send: Callable[[Params], Awaitable[Any]],
    label: str,
) -> Any:
    """`send(params)` in the capabilities' current parameter form; a refused parameter is
    adapted to (`adapt`) and the body goes again in the new form. `n > 1` refused raises
    `RefusesN` for the caller to fan out. Race-free: each try compares the refusal with the
    form *it* was sent in, so a request in flight when another learnt the same is resent."""
    last: HTTPStatusError | None = None
    for _ in range(ADAPT_ROUNDS):
        params = capabilities.params()
        try:
            return await send(params)
        except HTTPStatusError as exc:
            refusal = refusal_kind(exc.body, str(exc.message))
            said = adapt(capabilities, refusal, request, n, params)
            if said is None:
                raise
            if said:
                log.info("%s %s", label, said)
            if refusal is not None and refusal.kind == N_UNSUPPORTED:
                raise RefusesN(str(exc.message)) from None
            last = exc
    assert last is not None
    raise last
