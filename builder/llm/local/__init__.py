"""The embedded Gemma 3 270M model, in-process (`LocalProvider`) or behind a managed
llama.cpp server on 127.0.0.1 (`ManagedLlamaServer`) that the OpenAI provider talks to.

Reads: the Gemma GGUF from the user cache. Writes: nothing.
Entry point: `builder.llm.local.server.ManagedLlamaServer`.
"""

from builder.llm.local.inprocess import LocalProvider
from builder.llm.local.server import ManagedLlamaServer

__all__ = ["LocalProvider", "ManagedLlamaServer"]
