"""Subprocess entry point: `llama_cpp.server` with the project's chat template registered.

`python -m llama_cpp.server` only knows chat formats registered in its own process, and its
built-in "gemma" format drops system messages, tools and tool results. Registering
`chat_template.render` under `nap-gemma` first and then handing over to the stock server main
keeps one template for both local modes. Arguments are llama_cpp.server's own.
"""

from __future__ import annotations

import sys
from typing import Any

from builder.llm.chat_template import CHAT_FORMAT_NAME, STOP, messages_from_openai, render


def register_chat_format() -> None:
    """Make `--chat_format nap-gemma` available to llama.cpp in this process."""
    from llama_cpp.llama_chat_format import ChatFormatterResponse
    from llama_cpp.llama_chat_format import register_chat_format as register

    @register(CHAT_FORMAT_NAME)
    def format_nap_gemma(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **_: Any
    ) -> ChatFormatterResponse:
        prompt = render(messages_from_openai(messages), tools)
        return ChatFormatterResponse(prompt=prompt, stop=list(STOP))


def main(argv: list[str] | None = None) -> None:
    from llama_cpp.server.__main__ import main as server_main

    register_chat_format()
    sys.argv = [sys.argv[0], *(sys.argv[1:] if argv is None else argv)]
    server_main()


if __name__ == "__main__":
    main()
