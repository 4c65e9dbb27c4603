"""`LocalProvider`: the embedded Gemma 3 270M run in-process by llama-cpp-python.

This is the no-API-key default. One `Llama` is loaded lazily and shared; llama.cpp is not
thread-safe, so generations run one at a time on a private one-thread executor: the event loop
stays free and queued requests do not tie up the default executor's threads. `latency_s` is
generation time, not queueing time. The prompt comes from `builder.llm.chat_template` (the
model has no template of its own); a JSON schema becomes a llama.cpp grammar so that even this
tiny model returns parseable JSON. The n samples are sequential generations with seeds
`seed + i` (`seed` None means 0, so reruns give the same samples); the KV prefix cache makes
samples after the first cheap, and that reuse is reported as cached prompt tokens.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from builder.errors import PermanentLLMError
from builder.llm.chat_template import STOP, parse_tool_calls, render
from builder.llm.model_files import MODEL_ALIAS, ensure_model
from builder.llm.protocol import ChatRequest, ChatResponse, Completion, Usage
from builder.llm.scoring import ScoreRequest, ScoreResponse


class LocalProvider:
    """The ChatProvider for `provider="local"`; `load_seconds` is set once the model loads."""

    provider = "local"

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int = 2,
        default_max_tokens: int = 512,
        model: str = MODEL_ALIAS,
    ) -> None:
        self.model = model
        self.base_url: str | None = None
        self.load_seconds: float | None = None
        self._model_path = model_path
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._default_max_tokens = default_max_tokens
        self._llama: Any = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nap-local-llm")

    async def complete(self, request: ChatRequest) -> ChatResponse:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._complete_blocking, request)

    async def score(self, request: ScoreRequest) -> ScoreResponse:
        """Prompt log-probabilities for likelihood NAP (`builder.llm.local.inprocess_scoring`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._score_blocking, request)

    def _score_blocking(self, request: ScoreRequest) -> ScoreResponse:
        from builder.llm.local.inprocess_scoring import score_request

        started = time.perf_counter()
        with self._lock:
            tokens, prompt_tokens = score_request(self._load(), request, self._n_ctx)
        return ScoreResponse(tuple(tokens), prompt_tokens, time.perf_counter() - started)

    def close(self) -> None:
        """Free the model (it is reloaded on the next request)."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    def _complete_blocking(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        with self._lock:
            llama = self._load()
            prompt = llama.tokenize(render(request.messages, request.tools).encode(), special=True)
            if len(prompt) >= self._n_ctx:
                raise PermanentLLMError(
                    f"prompt of {len(prompt)} tokens does not fit the local model's context of "
                    f"{self._n_ctx}: raise n_ctx or shorten the prompt"
                )
            results = [self._sample(llama, prompt, request, index) for index in range(request.n)]
        usage = sum((u for _, u in results), Usage())
        completions = tuple(c for c, _ in results)
        return ChatResponse(completions, usage, time.perf_counter() - started, self.model)

    def _sample(
        self, llama: Any, prompt: list[int], request: ChatRequest, index: int
    ) -> tuple[Completion, Usage]:
        evaluated = list(getattr(llama, "_input_ids", ()))  # what the KV cache holds now
        cached = type(llama).longest_token_prefix(evaluated, prompt)
        try:
            response = llama.create_completion(
                prompt=prompt,
                max_tokens=request.max_tokens or self._default_max_tokens,
                temperature=request.temperature,
                top_p=1.0 if request.top_p is None else request.top_p,
                stop=[*STOP, *(request.stop or ())],
                seed=(request.seed or 0) + index,
                grammar=_grammar(request.json_schema),
            )
        except (RuntimeError, ValueError) as exc:  # llama.cpp decode / sampling failures
            raise PermanentLLMError(f"the local model failed to generate: {exc}") from exc
        choice = response["choices"][0]
        text, calls = parse_tool_calls(choice["text"]) if request.tools else (choice["text"], ())
        finish = "tool_calls" if calls else choice.get("finish_reason")
        counts = response.get("usage", {})
        usage = Usage(
            counts.get("prompt_tokens", len(prompt)),
            counts.get("completion_tokens", 0),
            max(0, min(cached, len(prompt) - 1)),  # llama.cpp re-evaluates at least one token
        )
        return Completion(text, calls, finish), usage

    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama

            path = self._model_path or ensure_model()
            started = time.perf_counter()
            self._llama = Llama(
                model_path=str(path),
                n_ctx=self._n_ctx,
                n_threads=self._n_threads,
                verbose=False,
            )
            self.load_seconds = time.perf_counter() - started
        return self._llama


def _grammar(schema: dict[str, Any] | None) -> Any:
    """A llama.cpp grammar forcing output that parses as JSON and matches `schema`."""
    if schema is None:
        return None
    from llama_cpp import LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as exc:  # the converter raises bare exceptions on unsupported keywords
        raise PermanentLLMError(
            f"the local model cannot constrain output to this JSON schema ({exc}); "
            "simplify the schema (no external $ref, no unsupported formats)"
        ) from exc
