"""What the real services refuse, as the stand-in servers refuse it: one function per service
flavour, each rule with its source and the service's real error body (status, JSON shape,
type/code, message). `FakeAPIServer` applies them by default (strict stand-ins).

Written from the services' documentation, their source and reported bodies, independently of
the builder's own table (`builder/llm/error_kinds.py`), so that a test of the builder against
these is not the builder agreeing with itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

Refusal = tuple[int, dict[str, Any]] | None

# Token estimate of a body, 4 characters a token (the stand-ins have no tokenizer).
CHARS_PER_TOKEN = 4

# The windows the flavours assume when a test sets none (large: only tests that ask overflow).
DEFAULT_WINDOW = {
    "openai": 128_000,
    "anthropic": 200_000,
    "vllm": 32_768,
    "sglang": 32_768,
    "llama-server": 32_768,
    "llama-cpp-python": 32_768,
}

# platform.openai.com/docs/guides/reasoning: o-series and gpt-5 reasoning models accept only
# the default temperature/top_p and take max_completion_tokens (gpt-5-chat is not one of them)
OPENAI_REASONING = re.compile(r"^(o1|o3|o4-mini)(-|$)|^gpt-5(?!-chat)")
# platform.claude.com/docs/en/about-claude/model-deprecations#api-parameter-deprecations:
# models released after Claude Opus 4.6 refuse temperature (1.0 kept for compatibility),
# top_p and top_k
ANTHROPIC_NO_SAMPLING = re.compile(r"^claude-(opus-4-[7-9]|(opus|sonnet|haiku)-[5-9]|fable)")


def prompt_tokens(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("system", ""))
    return len(text) // CHARS_PER_TOKEN


def _openai_error(message: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def openai_api(body: dict[str, Any], window: int) -> Refusal:
    """OpenAI's chat completions."""
    model = str(body.get("model", ""))
    if OPENAI_REASONING.search(model):
        for param in ("temperature", "top_p"):
            value = body.get(param)
            if value is not None and value != 1:
                # body as reported: github.com/johny-b/llmcomp/issues/69 (gpt-5.4)
                message = (
                    f"Unsupported value: '{param}' does not support {value:g} with this model. "
                    "Only the default (1) value is supported."
                )
                return 400, _openai_error(message, param, "unsupported_value")
        if "max_tokens" in body:
            # platform.openai.com/docs/api-reference/chat/create: max_tokens is not
            # compatible with o-series models
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return 400, _openai_error(message, "max_tokens", "unsupported_parameter")
    refused = openai_tool_order(body.get("messages", []))
    if refused is not None:
        return refused
    used = prompt_tokens(body)
    if used > window:
        # platform.openai.com/docs/guides/error-codes; body as reported in
        # github.com/crewAIInc/crewAI-examples/issues/121
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {used} tokens. Please reduce the length of the messages."
        )
        return 400, _openai_error(message, "messages", "context_length_exceeded")
    return None


def openai_tool_order(messages: list[dict[str, Any]]) -> Refusal:
    """platform.openai.com/docs/guides/function-calling: a `tool` message answers a call of
    the assistant message before it, and every call is answered before the next message."""
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_ids:
                text = (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
                return 400, _openai_error(text, f"messages.[{i}].role", None)
            open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            text = (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_ids)}"
            )
            return 400, _openai_error(text, f"messages.[{i}].role", None)
        open_ids = [c["id"] for c in message.get("tool_calls") or []]
    return None


def vllm(body: dict[str, Any], window: int) -> Refusal:
    """vLLM's OpenAI server: prompt + max_tokens over max_model_len (vllm/renderers/params.py,
    ErrorResponse of vllm/entrypoints/openai/protocol.py)."""
    used = prompt_tokens(body)
    wanted = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
    if used + wanted <= window:
        return None
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{wanted} output tokens and your prompt contains {used} input tokens, for a total of "
        f"{used + wanted} tokens. Please reduce the length of the input prompt or the number "
        "of requested output tokens."
    )
    return 400, {
        "error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    }


def vllm_engine(body: dict[str, Any], window: int) -> Refusal:
    """vLLM's engine-side check of the prompt alone (vllm/v1/engine/processor.py,
    `_validate_model_input`), reached when the server-side check let it through."""
    used = prompt_tokens(body)
    if used <= window:
        return None
    message = (
        f"The decoder prompt (length {used}) is longer than the maximum model length of "
        f"{window}. Make sure that `max_model_len` is no smaller than the number of text tokens."
    )
    return 400, {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def sglang(body: dict[str, Any], window: int) -> Refusal:
    """SGLang (python/sglang/srt/managers/tokenizer_manager.py, `_validate_one_request`)."""
    used = prompt_tokens(body)
    wanted = int(body.get("max_tokens") or 0)
    if used >= window:
        message = (
            f"The input ({used} tokens) is longer than the model's context length "
            f"({window} tokens)."
        )
    elif used + wanted >= window:
        message = (
            f"Requested token count exceeds the model's maximum context length of {window} "
            f"tokens. You requested a total of {used + wanted} tokens: {used} tokens from the "
            f"input messages and {wanted} tokens for the completion. Please reduce the number "
            "of tokens in the input messages or the completion to fit within the limit."
        )
    else:
        return None
    return 400, {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def llama_server(body: dict[str, Any], window: int) -> Refusal:
    """llama.cpp's llama-server (tools/server/server-common.cpp: `n` other than 1 throws in
    the request parser; format_error_response; server-context.cpp: the context check)."""
    if int(body.get("n") or 1) != 1:
        return 400, {
            "error": {
                "code": 400,
                "message": "Only one completion choice is allowed",
                "type": "invalid_request_error",
            }
        }
    used = prompt_tokens(body)
    if used > window:
        message = (
            f"request ({used} tokens) exceeds the available context size ({window} tokens), "
            "try increasing it"
        )
        return 400, {
            "error": {
                "code": 400,
                "message": message,
                "type": "exceed_context_size_error",
                "n_prompt_tokens": used,
                "n_ctx": window,
            }
        }
    return None


def llama_cpp_python(body: dict[str, Any], window: int) -> Refusal:
    """llama-cpp-python's server (llama_cpp/server/errors.py 0.3.36: the ValueError
    "Requested tokens (N) exceed context window of M" becomes this body); it ignores `n`."""
    used = prompt_tokens(body)
    wanted = int(body.get("max_tokens") or 0)
    if used + wanted <= window:
        return None
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{used + wanted} tokens ({used} in the messages, {wanted} in the completion). Please "
        "reduce the length of the messages or completion."
    )
    return 400, _openai_error(message, "messages", "context_length_exceeded")


def _anthropic_error(message: str) -> dict[str, Any]:
    # docs.anthropic.com/en/api/errors: {"type": "error", "error": {"type", "message"}}
    return {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_standin",
    }


def anthropic(body: dict[str, Any], window: int) -> Refusal:
    """Anthropic's Messages API."""
    if "max_tokens" not in body:
        return 400, _anthropic_error("max_tokens: Field required")
    if "n" in body:  # the API has no `n` (docs.anthropic.com/en/api/messages)
        return 400, _anthropic_error("n: Extra inputs are not permitted")
    if ANTHROPIC_NO_SAMPLING.search(str(body.get("model", ""))):
        for param in ("temperature", "top_p", "top_k"):
            if param in body and not (param == "temperature" and body[param] == 1):
                # body as reported in github.com/mario-andreschak/FLUJO/issues/229
                return 400, _anthropic_error(f"`{param}` is deprecated for this model.")
    refused = anthropic_tool_blocks(body)
    if refused is not None:
        return refused
    used, wanted = prompt_tokens(body), int(body["max_tokens"])
    if used > window:
        # body as reported in github.com/earendil-works/pi/issues/102
        return 400, _anthropic_error(f"prompt is too long: {used} tokens > {window} maximum")
    if used + wanted > window:
        # docs.anthropic.com/en/docs/build-with-claude/context-windows
        return 400, _anthropic_error(
            f"input length and `max_tokens` exceed context limit: {used} + {wanted} > {window}, "
            "decrease input length or `max_tokens` and try again"
        )
    return None


def anthropic_tool_blocks(body: dict[str, Any]) -> Refusal:
    """docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use: tool blocks
    need `tools`; each `tool_use` is answered by a `tool_result` in the next message, and each
    `tool_result` answers a `tool_use` of the previous one (bodies as reported in
    github.com/anthropics/claude-code/issues/7929 and #13460)."""
    messages = body.get("messages", [])
    blocks = [
        (i, j, b)
        for i, m in enumerate(messages)
        for j, b in enumerate(m["content"] if isinstance(m["content"], list) else [])
    ]
    kinds = {b.get("type") for _, _, b in blocks}
    if kinds & {"tool_use", "tool_result"} and not body.get("tools"):
        return 400, _anthropic_error(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )
    for i, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        uses = [b["id"] for b in content if b.get("type") == "tool_use"]
        following = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = (
            {
                b.get("tool_use_id")
                for b in following
                if isinstance(b, dict) and b.get("type") == "tool_result"
            }
            if isinstance(following, list)
            else set()
        )
        missing = [u for u in uses if u not in answered]
        if missing:
            return 400, _anthropic_error(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
        previous = messages[i - 1]["content"] if i > 0 else []
        used_ids = (
            {b.get("id") for b in previous if isinstance(b, dict) and b.get("type") == "tool_use"}
            if isinstance(previous, list)
            else set()
        )
        for j, block in enumerate(content):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in used_ids:
                return 400, _anthropic_error(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
    return None


FLAVOURS = {
    "openai": openai_api,
    "vllm": vllm,
    "vllm-engine": vllm_engine,
    "sglang": sglang,
    "llama-server": llama_server,
    "llama-cpp-python": llama_cpp_python,
    "anthropic": anthropic,
}


def refuse(flavour: str, body: dict[str, Any], window: int | None) -> Refusal:
    """The refusal `flavour` answers `body` with, or None when it serves it."""
    check = FLAVOURS[flavour]
    return check(body, window if window is not None else DEFAULT_WINDOW.get(flavour, 32_768))


# Rate limiting as the services answer it (429 with Retry-After), for fault injection.
RATE_LIMITED = {
    # platform.openai.com/docs/guides/error-codes (429 rate_limit_exceeded)
    "openai": {
        "error": {
            "message": "Rate limit reached for requests per min (RPM): Limit 500, "
            "Used 500, Requested 1. Please try again in 0s.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
    # docs.anthropic.com/en/api/errors (429 rate_limit_error)
    "anthropic": {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Number of request tokens has exceeded your per-minute rate limit",
        },
    },
}
