"""What an endpoint's error body means: one taxonomy for every service, read from the body's
codes first and from each service's own wording second.

Kinds (`refusal_kind`):
- `context_length`: the prompt (with `max_tokens`) does not fit the model's window; the step
  is dropped with this reason, the run goes on;
- `unsupported_sampling`: a sampling parameter the model refuses (`param`: temperature, top_p);
  the provider sends without it from then on (the model's default, 1.0);
- `max_completion_tokens`: the model wants `max_completion_tokens` instead of `max_tokens`;
- `n_unsupported`: the server refuses `n > 1`; the provider fans out one request per sample;
- `tools_required`: tool blocks were sent without `tools` (a replay bug, never retried);
- None: nothing this table knows (the status decides: retried or permanent).

`error_bodies.json` holds the real error bodies this reads, each with where it comes from; the
tests classify every one, and the README prints the table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONTEXT = "context_length"
SAMPLING = "unsupported_sampling"
COMPLETION_TOKENS = "max_completion_tokens"
N_UNSUPPORTED = "n_unsupported"
TOOLS_REQUIRED = "tools_required"


@dataclass(frozen=True)
class Refusal:
    kind: str
    param: str | None = None  # the refused parameter, when the body names one


# Second: each service's wording, for bodies without a known code (or with a generic one).
_WORDING: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    (re.compile(r"prompt is too long: \d+ tokens > \d+ maximum"), CONTEXT, None),  # Anthropic
    (re.compile(r"input length and `max_tokens` exceed context limit"), CONTEXT, None),
    (re.compile(r"maximum context length is \d+ tokens"), CONTEXT, None),  # OpenAI, vLLM, l-c-p
    (re.compile(r"is longer than the maximum model length"), CONTEXT, None),  # vLLM engine
    (re.compile(r"is longer than the model's context length"), CONTEXT, None),  # SGLang
    (re.compile(r"exceeds the model's maximum context length"), CONTEXT, None),  # SGLang
    (re.compile(r"exceeds the available context size"), CONTEXT, None),  # llama.cpp
    (re.compile(r"Requested tokens \(\d+\) exceed context window"), CONTEXT, None),  # l-c-p
    (re.compile(r"'(temperature|top_p)' does not support"), SAMPLING, None),  # OpenAI
    (re.compile(r"`(temperature|top_p|top_k)` is deprecated for this model"), SAMPLING, None),
    (re.compile(r"Unsupported parameter: '(temperature|top_p)'"), SAMPLING, None),
    (re.compile(r"Use 'max_completion_tokens' instead"), COMPLETION_TOKENS, "max_tokens"),
    (re.compile(r"[Oo]nly one completion choice is allowed"), N_UNSUPPORTED, "n"),  # llama.cpp
    (re.compile(r"`tool_use` or `tool_result` blocks must define tools"), TOOLS_REQUIRED, None),
)


def _error_object(body: Any) -> dict[str, Any]:
    """The object holding code/type/param/message: `body.error` (OpenAI, Anthropic, llama.cpp,
    vLLM >= 0.10) or the body itself (vLLM and SGLang `ErrorResponse`, FastAPI `detail`)."""
    if not isinstance(body, dict):
        return {}
    inner = body.get("error")
    return inner if isinstance(inner, dict) else body


def refusal_kind(body: Any, message: str = "") -> Refusal | None:
    """What the error means (module docstring), or None. `body` is the decoded JSON body (or
    its text), `message` any text around it (an SDK's message, a status line)."""
    error = _error_object(body)
    code, kind_of, param = (str(error.get(k) or "") for k in ("code", "type", "param"))
    if code == "context_length_exceeded" or kind_of == "exceed_context_size_error":
        return Refusal(CONTEXT)
    if code in ("unsupported_value", "unsupported_parameter") and param in ("temperature", "top_p"):
        return Refusal(SAMPLING, param)
    if code == "unsupported_parameter" and param == "max_tokens":
        return Refusal(COMPLETION_TOKENS, "max_tokens")
    text = " ".join(str(t) for t in (error.get("message"), error.get("detail"), message) if t)
    if not isinstance(body, dict):
        text = f"{body} {text}"
    for pattern, kind, fixed in _WORDING:
        found = pattern.search(text)
        if found is not None:
            named = fixed or (found.group(1) if pattern.groups else None) or (param or None)
            return Refusal(kind, named)
    return None


ERROR_BODIES = Path(__file__).parent / "error_bodies.json"


def real_bodies() -> list[dict[str, Any]]:
    """The real error bodies this module reads (`error_bodies.json`): service, HTTP status,
    body, the kind it means, and where it comes from (documentation, source file, a report)."""
    return list(json.loads(ERROR_BODIES.read_text(encoding="utf-8")))
