"""OpenAI chat completions: OpenAI itself and any OpenAI-compatible server (vLLM, SGLang,
llama.cpp).

Servers differ in what they honour, so the provider detects and adapts, and records what it
obtained in `capabilities`:
- `n`: a server that returns one choice when asked for more (llama.cpp) gets the missing
  samples as separate requests, with `seed + i` when a seed is given; later requests go
  straight to one request per sample. Any other short reply (0 choices, 3 of 8) is a bad
  reply, retried as such: one glitch does not bill the prompt n times for the rest of the run.
- structured output: `json_schema` with `strict: true` first (when the schema is
  strict-compatible), then without `strict`, then `{"type": "json_object", "schema": ...}`
  (what llama.cpp accepts), each tried when the previous is refused (400/422, or a 5xx as
  llama.cpp's server answers); what works is used from then on, else the first error stands.
- parameters: a refusal of `max_tokens` (use `max_completion_tokens`), of `temperature` or
  `top_p` (reasoning models), or of `n > 1` (llama.cpp's llama-server) is read from the body
  (`builder.llm.error_kinds`) and adapted to for good: the request goes again without it (n:
  one request per sample). Race-free: each request compares the refusal with the form it was
  sent in, so requests in flight when the first refusal arrives are sent again, not failed.
  Known models (`builder.llm.model_rules`) start in the right form.
Every HTTP request goes through the client's gate (slot, rate limits, budget, deadline).
The SDK's own retries are off: `LLMClient` retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from builder.errors import ConfigError, LLMError, TransientLLMError
from builder.llm.admission import Gate, NoGate
from builder.llm.endpoint_kinds import key_needed
from builder.llm.error_kinds import refusal_kind
from builder.llm.http_json import HTTPStatusError, JsonHTTP
from builder.llm.model_rules import model_rules
from builder.llm.openai_forms import RefusesN, forms, learn, send_adapting
from builder.llm.openai_transport import (
    DEFAULT_BASE_URL,
    DEFAULT_TRANSPORT,
    POOLS,
    TRANSPORTS,
    auth_headers,
    sdk_http_client,
)
from builder.llm.openai_wire import (
    Capabilities,
    Encoded,
    Params,
    completion_of,
    encoded_body,
    is_strict_compatible,
    usage_of,
    wire_body,
)
from builder.llm.protocol import ChatRequest, ChatResponse, Usage
from builder.llm.sdk_errors import raise_mapped, scrub, status_error

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_TRANSPORT",
    "PLACEHOLDER_KEY",
    "TRANSPORTS",
    "Capabilities",
    "OpenAIProvider",
    "is_strict_compatible",
]

PLACEHOLDER_KEY = "not-needed"  # for local servers that take no key; never a real secret


class OpenAIProvider:
    provider = "openai"
    uses_gate = True  # opens the client's gate per HTTP request

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_connections: int = 256,
        transport: str = DEFAULT_TRANSPORT,
        reasoning_effort: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.capabilities = Capabilities(reasoning_effort=reasoning_effort)
        rules = model_rules(self.provider, model)
        if rules.fixed_sampling:
            self.capabilities.refused_sampling = frozenset({"temperature", "top_p"})
        self.capabilities.max_tokens_param = rules.completion_tokens_param
        api_key = os.environ.get(api_key_env)
        if not api_key:
            if key_needed("openai", base_url):
                raise ConfigError(f"set {api_key_env} to use the OpenAI API (model {model!r})")
            api_key = PLACEHOLDER_KEY  # a self-hosted server; a 401 will say to set the key
        if transport not in TRANSPORTS:
            raise ConfigError(f"unknown transport {transport!r}; use one of {TRANSPORTS}")
        self.transport = transport
        self._api_key = api_key
        self._timeout = timeout
        self._label = f"openai {model} at {base_url or 'api.openai.com'}"
        self._direct: JsonHTTP | None = None
        self._sdk_clients: list[openai.AsyncOpenAI] = []
        if transport == "direct":
            url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
            self._direct = JsonHTTP(
                url,
                auth_headers(api_key),
                timeout_s=timeout,
                max_connections=max_connections,
                label=self._label,
                key_env=api_key_env,
            )
        else:
            # Several small connection pools instead of one big one: the httpx pool scans all
            # its connections on every request, which at 64 in flight cost more CPU than the
            # rest of the client together (measured); requests go round-robin over the pools.
            pools = POOLS if transport == "httpx" else 1
            self._sdk_clients = [self._new_sdk_client(transport) for _ in range(pools)]
        self._next = itertools.cycle(self._sdk_clients)

    def _new_sdk_client(self, transport: str) -> openai.AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self._timeout,
            max_retries=0,
            http_client=sdk_http_client(transport),
        )

    def sdk_client(self) -> openai.AsyncOpenAI:
        """An SDK client on this endpoint, for what only the SDK does (files, batches)."""
        if not self._sdk_clients:
            self._sdk_clients.append(self._new_sdk_client("httpx"))
        return self._sdk_clients[0]

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        if self._direct is not None:
            await self._direct.aclose()
        for client in self._sdk_clients:
            await client.close()

    async def complete(
        self, request: ChatRequest, gate: Gate | NoGate | None = None
    ) -> ChatResponse:
        started = time.perf_counter()
        gate = gate or NoGate()
        first: dict[str, Any] | None = None
        if self.capabilities.n is not False or request.n == 1:
            with contextlib.suppress(RefusesN):  # sent again below, one request per sample
                first = await self._create(request, request.n, request.seed, gate)
        if first is None:
            results = await self._fan_out(request, range(request.n), gate)
        else:
            results = [first]
            got = len(first["choices"])
            if request.n > 1 and got == 1 and self.capabilities.n is not True:
                if self.capabilities.n is None:
                    log.info(
                        "%s ignores n (asked %d, got 1): one request per sample",
                        self._label,
                        request.n,
                    )
                self.capabilities.n = False
                results += await self._fan_out(request, range(1, request.n), gate)
            elif got < request.n:
                raise TransientLLMError(
                    f"{self._label}: {got} choices for n={request.n}", kind="few_choices"
                )
            elif request.n > 1:
                self.capabilities.n = True
        completions = [completion_of(c) for r in results for c in r["choices"]][: request.n]
        usage = sum((usage_of(r, self.capabilities) for r in results), Usage())
        model = str(results[0].get("model") or self.model)
        return ChatResponse(tuple(completions), usage, time.perf_counter() - started, model)

    async def _fan_out(
        self, request: ChatRequest, indices: range, gate: Gate | NoGate
    ) -> list[dict[str, Any]]:
        """One single-sample request per index, seeded `seed + i` when a seed is given."""
        seeds = [None if request.seed is None else request.seed + i for i in indices]
        results = await asyncio.gather(*(self._create(request, 1, s, gate) for s in seeds))
        for result in results:
            if not result["choices"]:
                raise TransientLLMError(f"{self._label}: 0 choices", kind="few_choices")
        return list(results)

    async def _create(
        self, request: ChatRequest, n: int, seed: int | None, gate: Gate | NoGate
    ) -> dict[str, Any]:
        ready = self._encode_first(request, n, seed)  # before the slot: it holds only the I/O
        async with gate.http(n) as sent:
            try:
                result = await self._post_adapting(request, n, seed, ready)
            except HTTPStatusError as exc:  # not chained: the body may echo the key
                raise status_error(exc, self._label, self.api_key_env) from None
            except LLMError:
                raise
            except Exception as exc:
                if self._direct is not None:
                    raise
                import openai

                raise_mapped(exc, openai, self._label, self.api_key_env)
            if not isinstance(result, dict) or not isinstance(result.get("choices"), list):
                shown = scrub(str(result)[:200], self.api_key_env)
                raise TransientLLMError(
                    f"{self._label}: response has no choices: {shown}", kind="bad_response"
                )
            sent.usage = usage_of(result, self.capabilities)
        return result

    def _encode_first(self, request: ChatRequest, n: int, seed: int | None) -> Encoded:
        """The body of the form tried first, encoded (direct transport only)."""
        if self._direct is None:
            return {}
        dialect, parts = forms(self.capabilities, request)[0]
        params = self.capabilities.params()
        body = self._encoded_body(request, n, seed, dialect, parts, params)
        return {(dialect, parts, params): body}

    async def _post_adapting(
        self, request: ChatRequest, n: int, seed: int | None, ready: Encoded
    ) -> Any:
        """Send the richest form; when a server refuses it (400/422, or a 5xx as llama.cpp
        does), retry simpler forms: `json_object` + schema for `json_schema`, plain strings for
        content lists. Remember only what worked; if nothing does, the first error stands (a
        5xx may have been a plain outage)."""
        tried = forms(self.capabilities, request)
        first: HTTPStatusError | None = None
        for dialect, parts in tried:
            try:
                result = await self._post_params_adapting(request, n, seed, dialect, parts, ready)
            except HTTPStatusError as exc:
                refused = exc.status_code in (400, 422) or exc.status_code >= 500
                known = refusal_kind(exc.body, str(exc.message)) is not None
                if not refused or known or (dialect, parts) == tried[-1]:
                    # the first error stands (a 5xx may be an outage), unless this one is a
                    # problem of the request itself (its length, a parameter): no simpler form
                    # cures that, and none is learnt from it
                    if first is None or known:
                        raise
                    raise first from None
                first = first or exc
                continue
            refusal = first.status_code if first is not None else None
            for said in learn(self.capabilities, request, (dialect, parts), refusal):
                log.info("%s %s from now on", self._label, said)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post_params_adapting(
        self,
        request: ChatRequest,
        n: int,
        seed: int | None,
        dialect: str,
        parts: bool,
        ready: Encoded,
    ) -> Any:
        """POST, adapting to a refused parameter (`openai_forms.send_adapting`)."""

        def send(params: Params) -> Any:
            return self._post(request, n, seed, dialect, parts, ready, params)

        return await send_adapting(self.capabilities, request, n, send, self._label)

    async def _post(
        self,
        request: ChatRequest,
        n: int,
        seed: int | None,
        dialect: str,
        parts: bool,
        ready: Encoded,
        params: Params,
    ) -> Any:
        """POST the body in parameter form `params`. On the SDK transports, its typed-params
        transform would cost ~3 ms of CPU per request (measured), so the body goes through
        `post` as built; its status errors become `HTTPStatusError` like the direct
        transport's."""
        if self._direct is not None:
            data = ready.pop((dialect, parts, params), None)
            if data is None:
                data = self._encoded_body(request, n, seed, dialect, parts, params)
            return await self._direct.post("/chat/completions", data)
        import openai

        body = self._body(request, n, seed, dialect, parts, params)
        client = next(self._next)
        try:
            return await client.post("/chat/completions", body=body, cast_to=dict[str, Any])
        except openai.APIStatusError as exc:
            message = str(exc.message)
            raise HTTPStatusError(exc.status_code, exc.body, message, exc.response.headers) from exc

    def _body(
        self,
        request: ChatRequest,
        n: int,
        seed: int | None,
        dialect: str = "json_schema",
        parts: bool = True,
        params: Params | None = None,
    ) -> dict[str, Any]:
        """The request body as the SDK transports and batch lines send it."""
        return wire_body(self.model, self.capabilities, request, n, seed, dialect, parts, params)

    def _encoded_body(
        self,
        request: ChatRequest,
        n: int,
        seed: int | None,
        dialect: str,
        parts: bool,
        params: Params,
    ) -> bytes:
        caps = self.capabilities
        return encoded_body(self.model, caps, request, n, seed, dialect, parts, params)
