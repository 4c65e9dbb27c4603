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

`REAL_BODIES` holds the real error bodies this reads, each with where it comes from; the tests
classify every one, and the README prints the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


# The real bodies, verbatim in shape and wording (numbers and ids from the cited reports).
REAL_BODIES: tuple[dict[str, Any], ...] = (
    {
        "service": "OpenAI",
        "status": 400,
        "body": {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "https://platform.openai.com/docs/guides/error-codes; body as reported in github.com/crewAIInc/crewAI-examples/issues/121",  # noqa: E501
    },
    {
        "service": "OpenAI (gpt-5, o-series)",
        "status": 400,
        "body": {
            "error": {
                "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }
        },  # noqa: E501
        "kind": SAMPLING,
        "source": "https://platform.openai.com/docs/guides/reasoning; body in github.com/johny-b/llmcomp/issues/69 (gpt-5.4)",  # noqa: E501
    },
    {
        "service": "OpenAI (o-series)",
        "status": 400,
        "body": {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        },  # noqa: E501
        "kind": COMPLETION_TOKENS,
        "source": "https://platform.openai.com/docs/api-reference/chat/create (max_tokens: deprecated, not compatible with o-series models)",  # noqa: E501
    },
    {
        "service": "Anthropic",
        "status": 400,
        "body": {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 219898 tokens > 200000 maximum",
            },
            "request_id": "req_011CVjxiYzEFcAQC4Fk87zw2",
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "https://docs.anthropic.com/en/api/errors; body in github.com/earendil-works/pi/issues/102",  # noqa: E501
    },
    {
        "service": "Anthropic",
        "status": 400,
        "body": {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
            },
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "https://docs.anthropic.com/en/docs/build-with-claude/context-windows",
    },
    {
        "service": "Anthropic (models after Claude Opus 4.6)",
        "status": 400,
        "body": {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "`temperature` is deprecated for this model.",
            },
            "request_id": "req_011CdMnLzU4Di54GNtEgVsFb",
        },  # noqa: E501
        "kind": SAMPLING,
        "source": "https://platform.claude.com/docs/en/about-claude/model-deprecations#api-parameter-deprecations; body in github.com/mario-andreschak/FLUJO/issues/229",  # noqa: E501
    },
    {
        "service": "Anthropic",
        "status": 400,
        "body": {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "Requests which include `tool_use` or `tool_result` blocks must define tools.",
            },
        },  # noqa: E501
        "kind": TOOLS_REQUIRED,
        "source": "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use",
    },
    {
        "service": "vLLM (OpenAI server)",
        "status": 400,
        "body": {
            "error": {
                "message": "This model's maximum context length is 4096 tokens. However, you requested 1024 output tokens and your prompt contains 3584 input tokens, for a total of 4608 tokens. Please reduce the length of the input prompt or the number of requested output tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/vllm-project/vllm: vllm/renderers/params.py (the token-length check), vllm/entrypoints/openai/protocol.py (ErrorResponse)",  # noqa: E501
    },
    {
        "service": "vLLM (engine)",
        "status": 400,
        "body": {
            "object": "error",
            "message": "The decoder prompt (length 9254) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/vllm-project/vllm: vllm/v1/engine/processor.py (_validate_model_input)",  # noqa: E501
    },
    {
        "service": "SGLang",
        "status": 400,
        "body": {
            "object": "error",
            "message": "The input (10009 tokens) is longer than the model's context length (8192 tokens).",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/sgl-project/sglang: python/sglang/srt/managers/tokenizer_manager.py (_validate_one_request)",  # noqa: E501
    },
    {
        "service": "SGLang",
        "status": 400,
        "body": {
            "object": "error",
            "message": "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested a total of 9216 tokens: 8192 tokens from the input messages and 1024 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/sgl-project/sglang: python/sglang/srt/managers/tokenizer_manager.py (_validate_one_request)",  # noqa: E501
    },
    {
        "service": "llama.cpp llama-server",
        "status": 400,
        "body": {
            "error": {
                "code": 400,
                "message": "request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 13392,
                "n_ctx": 8192,
            }
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/ggml-org/llama.cpp: tools/server/server-context.cpp (send_error), tools/server/server-common.cpp (format_error_response: ERROR_TYPE_EXCEED_CONTEXT_SIZE)",  # noqa: E501
    },
    {
        "service": "llama.cpp llama-server",
        "status": 400,
        "body": {
            "error": {
                "code": 400,
                "message": "Only one completion choice is allowed",
                "type": "invalid_request_error",
            }
        },  # noqa: E501
        "kind": N_UNSUPPORTED,
        "source": "github.com/ggml-org/llama.cpp: tools/server/server-common.cpp (oaicompat_chat_params_parse: n != 1 throws)",  # noqa: E501
    },
    {
        "service": "llama.cpp llama-server (older builds)",
        "status": 500,
        "body": {
            "error": {
                "code": 500,
                "message": "Only one completion choice is allowed",
                "type": "server_error",
            }
        },  # noqa: E501
        "kind": N_UNSUPPORTED,
        "source": "github.com/ggml-org/llama.cpp: examples/server/utils.hpp (oaicompat_completion_params_parse), answered as a server error",  # noqa: E501
    },
    {
        "service": "llama-cpp-python server",
        "status": 400,
        "body": {
            "error": {
                "message": "This model's maximum context length is 2048 tokens. However, you requested 2560 tokens (2048 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },  # noqa: E501
        "kind": CONTEXT,
        "source": "github.com/abetlen/llama-cpp-python: llama_cpp/server/errors.py (ErrorResponseFormatters.context_length_exceeded), 0.3.36",  # noqa: E501
    },
)
