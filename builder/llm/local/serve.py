"""Subprocess entry point: `llama_cpp.server` with the project's chat template registered.

`python -m llama_cpp.server` only knows chat formats registered in its own process, and its
built-in "gemma" format drops system messages, tools and tool results. Registering
`chat_template.render` under `nap-gemma` first and then handing over to the stock server main
keeps one template for both local modes. The handler also turns `<tool_call>` blocks in the
generated text into OpenAI `tool_calls`, so the OpenAI provider sees tool calls from the local
server exactly as from any other. Arguments are llama_cpp.server's own.
"""

from __future__ import annotations

import sys
from typing import Any, cast

from builder.llm.chat_template import (
    CHAT_FORMAT_NAME,
    STOP,
    messages_from_openai,
    parse_tool_calls,
    render,
)


def with_tool_calls(response: dict[str, Any]) -> dict[str, Any]:
    """A llama.cpp chat response with `<tool_call>` blocks moved into `message.tool_calls`."""
    for choice in response.get("choices", ()):
        message = choice.get("message", {})
        if message.get("tool_calls") or not message.get("content"):
            continue
        prose, calls = parse_tool_calls(message["content"])
        if not calls:
            continue
        message["content"] = prose or None
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
        choice["finish_reason"] = "tool_calls"
    return response


TOOL_CALL_END = "</tool_call>"


def close_cut_tool_call(response: dict[str, Any]) -> dict[str, Any]:
    """Put back the `</tool_call>` that stopped generation (stop strings are not returned)."""
    for choice in response.get("choices", ()):
        message = choice.get("message", {})
        content = message.get("content") or ""
        if content.count("<tool_call>") > content.count(TOOL_CALL_END):
            message["content"] = content + TOOL_CALL_END
    return response


def register_chat_format() -> None:
    """Make `--chat_format nap-gemma` available to llama.cpp in this process."""
    from llama_cpp.llama_chat_format import (
        ChatFormatterResponse,
        LlamaChatCompletionHandlerRegistry,
        chat_formatter_to_chat_completion_handler,
    )

    def format_nap_gemma(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **_: Any
    ) -> ChatFormatterResponse:
        prompt = render(messages_from_openai(messages), tools)
        # With tools, the turn ends at its first complete call: a small model otherwise goes on
        # to invent the tool's response, which costs decode time and is thrown away anyway.
        # (So the embedded model makes one call per turn.)
        stop = [*STOP, TOOL_CALL_END] if tools else list(STOP)
        return ChatFormatterResponse(prompt=prompt, stop=stop)

    generate = chat_formatter_to_chat_completion_handler(cast(Any, format_nap_gemma))

    def handler(**kwargs: Any) -> Any:
        result = generate(**kwargs)
        if kwargs.get("tools") and isinstance(result, dict):  # streams are passed through
            return with_tool_calls(close_cut_tool_call(cast(dict[str, Any], result)))
        return result

    LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        CHAT_FORMAT_NAME, handler, overwrite=True
    )


def main(argv: list[str] | None = None) -> None:
    from llama_cpp.server.__main__ import main as server_main

    register_chat_format()
    sys.argv = [sys.argv[0], *(sys.argv[1:] if argv is None else argv)]
    server_main()


if __name__ == "__main__":
    main()
